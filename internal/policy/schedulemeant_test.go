package policy

import (
	"strings"
	"testing"
)

// TestAMistypedScheduleIsGivenTheTimeMeant: a showback schedule written "WED 7:30pm" or "WEN
// 07:30" was refused with `write e.g. "MON 09:00"`, another day and time than the ones typed,
// which put back would post the showback on Mondays. The example keeps the weekday and the time
// that can be read, in the form the schedule takes, and it loads.
func TestAMistypedScheduleIsGivenTheTimeMeant(t *testing.T) {
	for typed, want := range map[string]string{
		"WED 7:30pm":        "WED 19:30",
		"WEN 07:30":         "WED 07:30",
		"Thurs 8am":         "THU 08:00",
		"friday at 17.45":   "FRI 17:45",
		"every monday at 9": "MON 09:00",
		"tuesdays 12:00 PM": "TUE 12:00",
		"sat 12am":          "SAT 00:00",
		"Miðvikudagur 0730": "MON 07:30",
		"this wednesday 10": "WED 10:00",
	} {
		src := exampleWith(t, `schedule: "MON 09:00"`, `schedule: "`+typed+`"`)
		_, err := Load([]byte(src), "p.yaml")
		msg := `schedule "` + typed + `" is not a weekday and a 24-hour time; write e.g. "` + want + `"`
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v; want %q", typed, err, msg)
			continue
		}
		if _, err := Load([]byte(exampleWith(t, `schedule: "MON 09:00"`, `schedule: "`+want+`"`)), "p.yaml"); err != nil {
			t.Errorf("%s: the schedule offered, %s, does not load: %v", typed, want, err)
		}
	}
}
