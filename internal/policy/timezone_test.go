package policy

import "testing"

// TestATimeZoneIsAPlace: an abbreviation such as EST need not follow a place's clock (EST
// is UTC-5 in July too, an hour off New York's), and Local is whichever host runs the service, so
// each is refused at its line with the name of a place; a place, UTC or GMT is accepted.
func TestATimeZoneIsAPlace(t *testing.T) {
	for _, c := range []struct{ tz, msg string }{
		{"EST", `timezone "EST" is an abbreviation, not a place, so it need not follow the place's daylight saving time; write the IANA name of the place whose clock the times should follow, e.g. timezone: America/New_York`},
		{"CET", `timezone "CET" is an abbreviation, not a place, so it need not follow the place's daylight saving time; write the IANA name of the place whose clock the times should follow, e.g. timezone: Europe/Berlin`},
		{"PST8PDT", `timezone "PST8PDT" is an abbreviation, not a place, so it need not follow the place's daylight saving time; write the IANA name of the place whose clock the times should follow, e.g. timezone: America/Los_Angeles`},
		{"MST", `timezone "MST" is an abbreviation, not a place, so it need not follow the place's daylight saving time; write the IANA name of the place whose clock the times should follow, e.g. timezone: America/Denver`},
		{"Local", `timezone "Local" is the clock of whichever host runs Quartermaster, which differs from host to host; write the IANA name of a place, e.g. timezone: America/Chicago`},
	} {
		pe := refused(t, "timezone: America/Chicago", "timezone: "+c.tz)
		wantProblem(t, pe, 5, c.msg)
	}
	for _, tz := range []string{"UTC", "GMT", "Etc/UTC", "Europe/Berlin", "Asia/Kolkata", "America/Argentina/Buenos_Aires"} {
		if _, err := Load([]byte(exampleWith(t, "timezone: America/Chicago", "timezone: "+tz)), "p.yaml"); err != nil {
			t.Errorf("timezone %s: %v", tz, err)
		}
	}
}

// TestAMistypedTimeZoneIsGivenThePlaceMeant: a time zone one letter off a place's name
// (America/St_John for America/St_Johns), written in another case or with a space for the
// underscore, or written as its city alone, was answered "use an IANA name such as
// America/Chicago", a clock hours off the one meant. The refusal names the place meant, and that
// place loads; a name like none keeps the general answer.
func TestAMistypedTimeZoneIsGivenThePlaceMeant(t *testing.T) {
	for typed, want := range map[string]string{
		"America/St_John":  "America/St_Johns",
		"america/st_johns": "America/St_Johns",
		"America/St Johns": "America/St_Johns",
		"St_Johns":         "America/St_Johns",
		"Reykjavik":        "Atlantic/Reykjavik",
		"Europe/Reykjavik": "Atlantic/Reykjavik",
		"Asia/Kathmndu":    "Asia/Kathmandu",
		"Australia/Sidney": "Australia/Sydney",
		"Pacific/Aukland":  "Pacific/Auckland",
		"Asia/Kolkatta":    "Asia/Kolkata",
	} {
		pe := refused(t, "timezone: America/Chicago", "timezone: "+typed)
		wantProblem(t, pe, 5, `timezone "`+typed+`" is unknown; did you mean `+want+`? e.g. timezone: `+want)
		if _, err := Load([]byte(exampleWith(t, "timezone: America/Chicago", "timezone: "+want)), "p.yaml"); err != nil {
			t.Errorf("timezone %s, offered for %s: %v", want, typed, err)
		}
	}
	pe := refused(t, "timezone: America/Chicago", "timezone: Nowhere/Qqqqzzzz")
	wantProblem(t, pe, 5, `timezone "Nowhere/Qqqqzzzz" is unknown; use an IANA name such as America/Chicago`)
}
