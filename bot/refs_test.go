package bot

import (
	"context"
	"testing"
)

// TestMemoryRefsKeepEachCopyOnce: a copy saved twice is listed once, and the copies of a ref are
// listed oldest first, without those of other refs.
func TestMemoryRefsKeepEachCopyOnce(t *testing.T) {
	ctx := context.Background()
	var m MemoryRefs
	for _, r := range []MessageRef{
		{Ref: "approval:L-1", Recipient: "dana", Channel: "D1", MessageID: "1.0"},
		{Ref: "approval:L-2", Recipient: "dana", Channel: "D1", MessageID: "2.0"},
		{Ref: "approval:L-1", Recipient: "#gpu-approvals", Channel: "C1", MessageID: "3.0"},
		{Ref: "approval:L-1", Recipient: "dana", Channel: "D1", MessageID: "1.0"}, // again
	} {
		if err := m.SaveMessageRef(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := m.MessageRefs(ctx, "approval:L-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].MessageID != "1.0" || got[1].MessageID != "3.0" {
		t.Fatalf("copies of approval:L-1 = %+v, want 1.0 then 3.0", got)
	}
}
