package main

import (
	"strings"
	"testing"
)

// A guild id is a Discord snowflake, a positive decimal number that fits Discord's 64 bits:
// discord register refuses any other --guild (negative, zero, not a number, too large) in one
// sentence, with --print as well as without, with the command as typed and the id put right;
// that example, typed back, prints the command. DISCORD_APP_ID is read by the same rule.
func TestDiscordRegisterRefusesAGuildIdThatIsNoSnowflake(t *testing.T) {
	clearEnv(t)
	pol := "../../commands/testdata/harbor.yaml"
	for _, guild := range []string{"-3", "0", "000", "abc", "12a4", "+1180000000000000001", "18446744073709551616", "99999999999999999999"} {
		args := []string{"discord", "register", "--guild", guild, "--print", "--policy", pol}
		code, stdout, stderr := runQM(args...)
		msg := strings.TrimSpace(stderr)
		want := "e.g. quartermaster discord register --guild 1180000000000000001 --print --policy " + pol
		if code != 2 || stdout != "" || strings.Contains(msg, "\n") || !strings.Contains(msg, `--guild "`+guild+`" is not a Discord server id`) || !strings.HasSuffix(msg, want) {
			t.Errorf("%v: exit %d, stdout %d bytes, %q; want exit 2, nothing printed, and one sentence ending %s", args, code, len(stdout), msg, want)
			continue
		}
		if code, stdout, stderr := runQM(strings.Fields(want)[2:]...); code != 0 || !strings.Contains(stdout, `"name": "gpu"`) {
			t.Errorf("the example %s: exit %d, %s", want, code, stderr)
		}
	}
	// The largest and a usual id are taken.
	for _, guild := range []string{"18446744073709551615", "777000000000000001"} {
		if code, _, stderr := runQM("discord", "register", "--guild", guild, "--print", "--policy", pol); code != 0 {
			t.Errorf("--guild %s: exit %d, %s", guild, code, stderr)
		}
	}
	t.Setenv("DISCORD_BOT_TOKEN", "x")
	for _, id := range []string{"0", "-1", "18446744073709551616"} {
		t.Setenv("DISCORD_APP_ID", id)
		code, _, stderr := runQM("discord", "register", "--guild", "777000000000000001", "--policy", pol)
		if code != 2 || !strings.Contains(stderr, `DISCORD_APP_ID="`+id+`" is not a Discord id`) {
			t.Errorf("DISCORD_APP_ID=%s: exit %d, %q; want it refused", id, code, stderr)
		}
	}
}
