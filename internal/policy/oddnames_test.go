package policy

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
)

// A class or team name that is no name (100,000 characters, a right-to-left override, markup) is
// refused in problems that stay short and show every character they quote: the name is clipped,
// an invisible character is written as its escape (\u202e) rather than turning the rest of the
// line around, and an example that names the class or team (a partition, a node selector, a
// channel, a storage path) gives a name that would pass, not the one refused. Before, a team
// name of 100,000 characters was printed whole, a class "d\u202eev" turned every line about it
// around, and a class "*dev*" was told "e.g. partition: *dev*".
func TestProblemsWithAnOddNameStayShortAndShowWhatTheyQuote(t *testing.T) {
	good, err := os.ReadFile("../../commands/testdata/other.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eg := regexp.MustCompile(`e\.g\. partition: (\S+)|gpu\.acme/class: ([^}]+)}|channel: "#([^"]*)"|path: /projects/(\S+)`)
	for _, odd := range []string{strings.Repeat("d", 100000), "d\u202eev", "*dev*", "d\u200dev", "<!channel>"} {
		for _, what := range []string{"class", "team"} {
			src := string(good)
			if what == "class" {
				src = strings.Replace(src, "  - name: dev\n", "  - name: \""+odd+"\"\n", 1)
				src = strings.Replace(src, "{partition: dev,", "{partition: \""+odd+"\",", 1)
				src = strings.Replace(src, "node_selector: {pool: dev}", "node_selector: {pool: \""+odd+"\"}", 1)
			} else {
				src = strings.Replace(src, "  - name: robotics\n", "  - name: \""+odd+"\"\n", 1)
			}
			_, err := Load([]byte(src), "odd.yaml")
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s %.20q: %v; want problems", what, odd, err)
			}
			for _, p := range pe.Problems {
				if len([]rune(p.Msg)) > 600 {
					t.Errorf("%s %.20q: a problem of %d characters: %.200s…", what, odd, len([]rune(p.Msg)), p.Msg)
				}
				if strings.ContainsAny(p.Msg, "\u202e\u200d") {
					t.Errorf("%s %.20q: a problem shows an invisible character: %q", what, odd, p.Msg)
				}
				for _, m := range eg.FindAllStringSubmatch(p.Msg, -1) {
					for _, name := range m[1:] {
						if name != "" && strings.ContainsAny(name, "*<>!\u202e\u200d") || len(name) > 63 {
							t.Errorf("%s %.20q: the example %q names what was refused: %.300s", what, odd, m[0], p.Msg)
						}
					}
				}
			}
		}
	}
}
