package discord

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// With DISCORD_API_URL set, a request that fails names the address it was sent to, and the
// setting that sent it there, not only discord.com, which it never tried: a log line saying
// discord.com cannot be reached would send the operator to the wrong network.
func TestARequestSentToDiscordAPIURLThatFailsNamesThatURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := rewriteClient(&http.Client{}, "http://"+addr)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(discordgo.EndpointGateway)
	if err == nil {
		resp.Body.Close()
		t.Fatal("a request to a closed port succeeded")
	}
	for _, want := range []string{"DISCORD_API_URL", "http://" + addr + "/api/"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}
