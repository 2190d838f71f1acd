package store

import (
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	cases := []struct {
		url, dialect, driver, dsnPrefix string
	}{
		{"postgres://u@h:5432/db?sslmode=disable", Postgres, "postgres", "postgres://u@h:5432/db?sslmode=disable"},
		{"postgresql://u@h/db", Postgres, "postgres", "postgresql://u@h/db"},
		{"sqlite:/var/lib/qm/qm.db", SQLite, "sqlite", "file:/var/lib/qm/qm.db?_pragma=busy_timeout(5000)&"},
		{"sqlite:///var/lib/qm/qm.db", SQLite, "sqlite", "file:/var/lib/qm/qm.db?"},
		{"sqlite:qm.db", SQLite, "sqlite", "file:qm.db?"},
		{"sqlite::memory:", SQLite, "sqlite", "file::memory:?"},
	}
	for _, c := range cases {
		dialect, driver, dsn, err := parseURL(c.url)
		if err != nil {
			t.Errorf("parseURL(%q): %v", c.url, err)
			continue
		}
		if dialect != c.dialect || driver != c.driver || !strings.HasPrefix(dsn, c.dsnPrefix) {
			t.Errorf("parseURL(%q) = %s, %s, %s; want %s, %s, %s…", c.url, dialect, driver, dsn, c.dialect, c.driver, c.dsnPrefix)
		}
		if dialect == SQLite {
			for _, want := range []string{"journal_mode(WAL)", "foreign_keys(1)", "_time_format=sqlite", "_txlock=immediate"} {
				if !strings.Contains(dsn, want) {
					t.Errorf("parseURL(%q) = %s: missing %s", c.url, dsn, want)
				}
			}
		}
	}
	if _, _, dsn, _ := parseURL("sqlite:x.db?_pragma=synchronous(NORMAL)"); !strings.HasSuffix(dsn, "&_pragma=synchronous(NORMAL)") {
		t.Errorf("extra SQLite parameters dropped: %s", dsn)
	}
	for _, bad := range []string{"", "mysql://x", "sqlite:", "x.db", "postgres:/nohost"} {
		if _, _, _, err := parseURL(bad); err == nil {
			t.Errorf("parseURL(%q) succeeded", bad)
		}
	}
	_, _, _, err := parseURL("mysql://root:hunter2@db/qm")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v shows the password", err)
	}
}

func TestLockIDs(t *testing.T) {
	if got := lockIDs(nil); got != nil {
		t.Errorf("lockIDs(nil) = %v", got)
	}
	a := lockIDs([]string{"b", "a", "b", "c", "a"})
	b := lockIDs([]string{"c", "a", "b"})
	if len(a) != 3 || len(b) != 3 {
		t.Fatalf("want 3 distinct ids: %v %v", a, b)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("order depends on the caller: %v vs %v", a, b)
		}
		if i > 0 && a[i-1] >= a[i] {
			t.Fatalf("not sorted: %v", a)
		}
	}
}

func TestGPUIndexText(t *testing.T) {
	for _, c := range []struct {
		idx  []int
		text string
	}{{nil, ""}, {[]int{0}, "0"}, {[]int{0, 1}, "0,1"}, {[]int{7, 3}, "7,3"}} {
		if got := formatGPUIndex(c.idx); got != c.text {
			t.Errorf("formatGPUIndex(%v) = %q, want %q", c.idx, got, c.text)
		}
		back, err := parseGPUIndex(c.text)
		if err != nil || len(back) != len(c.idx) {
			t.Errorf("parseGPUIndex(%q) = %v, %v", c.text, back, err)
		}
	}
	if _, err := parseGPUIndex("0,x"); err == nil {
		t.Error(`parseGPUIndex("0,x") succeeded`)
	}
}

// A database URL that does not parse, or names a server that is not there, is reported without
// its password, whatever the password holds and wherever the parser stopped.
func TestMalformedDatabaseURLDoesNotShowItsPassword(t *testing.T) {
	const pw = "Hunter2Secret"
	urls := []string{
		"postgres://qm:" + pw + "@db:54x32/qm",
		"postgres://qm:" + pw + "@[::1/qm",
		"postgres://qm:Hunter2 Secret@127.0.0.1:1/qm",
		"postgres://qm:Hunter2/Secret@db/qm",
		"postgres://qm:Hunter2#Secret@db/qm",
		"postgres://qm:Hunter2?Secret@db/qm",
		"postgres://qm:Hunter2%zzSecret@db/qm",
		"postgres://qm:Hunter2:Secret@db:x/qm",
		"postgresql://qm:" + pw + "@127.0.0.1:1/qm?sslmode=bogus",
		"postgresql://qm:" + pw + "@127.0.0.1:1/qm?connect_timeout=abc",
		"postgres://qm:" + pw + "@127.0.0.1:1/qm?connect_timeout=1",
		"postgres:qm:" + pw + "@db/qm",
		"mysql://root:" + pw + "@db/qm",
		"host=db user=qm password=" + pw + " dbname=qm",
		"host=db user=qm password='" + pw + "' dbname=qm",
	}
	for _, u := range urls {
		_, err := Connect(t.Context(), u, nil)
		if err == nil {
			t.Errorf("Connect(%q) succeeded", u)
			continue
		}
		for _, piece := range []string{pw, "Hunter2", "Secret"} {
			if strings.Contains(err.Error(), piece) {
				t.Errorf("Connect(%q): the error shows the password: %v", u, err)
				break
			}
		}
	}
	if got := redact("postgres://qm:p@ss:w/rd@db/qm"); got != "postgres://qm:xxxxx@db/qm" {
		t.Errorf("redact = %q", got)
	}
}
