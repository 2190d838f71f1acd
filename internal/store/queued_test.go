package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestQueuedRecipients runs on both databases: those to whom notices about a lease wait to be
// delivered are listed once each; one whose notice went out is not, nor another lease's.
func TestQueuedRecipients(t *testing.T) {
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := storetest.Open(t, url(t))
			ctx := context.Background()
			now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
			one := func(id qm.LeaseID, to string) qm.Notice {
				return qm.Notice{Kind: qm.NoticeApprovalRequest, To: []string{to}, Lease: &qm.Lease{ID: id}}
			}
			if err := db.Update(ctx, nil, func(tx qm.Tx) error {
				_, err := tx.AddNotices(ctx, []qm.Notice{one(7, "bea@x.example"), one(7, "cai@x.example"), one(7, "bea@x.example"), one(8, "dan@x.example")}, now)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			claimed, err := db.ClaimNotices(ctx, "a", nil, now, 10, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range claimed {
				if c.Notice.To[0] == "cai@x.example" {
					if err := db.NoticeSent(ctx, c.ID, now); err != nil {
						t.Fatal(err)
					}
				}
			}
			got, err := db.QueuedRecipients(ctx, 7)
			if err != nil || strings.Join(got, ",") != "bea@x.example" {
				t.Fatalf("queued for lease 7 = %v %v; want bea alone", got, err)
			}
		})
	}
}
