package comments

import (
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
)

// The moderation state machine of schema CommentStatus, without the store: every
// action from every status.
func TestModerationStateMachine(t *testing.T) {
	all := []string{StatusPending, StatusUnapproved, StatusPublished, StatusSpam, StatusRemoved}
	// to[action][from] is the status the action leads to; "" refused;
	// the same status, allowed but unchanged.
	to := map[string]map[string]string{
		"approve":  {StatusPending: StatusPublished, StatusUnapproved: StatusPublished},
		"spam":     {StatusPending: StatusSpam, StatusUnapproved: StatusSpam, StatusPublished: StatusSpam, StatusSpam: StatusSpam, StatusRemoved: StatusSpam},
		"not_spam": {StatusSpam: StatusPublished},
		"remove":   {StatusPending: StatusRemoved, StatusUnapproved: StatusRemoved, StatusPublished: StatusRemoved, StatusSpam: StatusRemoved, StatusRemoved: StatusRemoved},
		"restore":  {StatusRemoved: StatusPublished},
	}
	now := admin.Time{Time: time.Date(2024, 3, 11, 12, 0, 0, 0, time.UTC)}
	for name, want := range to {
		a := actionNamed(name)
		for _, from := range all {
			c := Comment{Status: from}
			changed, err := a.apply(&c, now)
			switch next := want[from]; next {
			case "":
				if err == nil || admin.ErrorCode(err) != admin.EINVALID {
					t.Errorf("%s of %s: err %v, want a 422", name, from, err)
				} else if msg := err.(*admin.Error).Fields["status"]; len(msg) != 1 || !strings.HasPrefix(msg[0], "is "+from+": "+name+" applies only to ") {
					t.Errorf("%s of %s: message %q", name, from, msg)
				}
				if c.Status != from {
					t.Errorf("%s of %s: status became %s", name, from, c.Status)
				}
			case from:
				if err != nil || changed || !c.UpdatedAt.IsZero() {
					t.Errorf("%s of %s: changed %v, err %v, updated %v; want no change", name, from, changed, err, c.UpdatedAt)
				}
			default:
				if err != nil || !changed || c.Status != next || !c.UpdatedAt.Equal(now.Time) {
					t.Errorf("%s of %s: %s (changed %v, err %v), want %s", name, from, c.Status, changed, err, next)
				}
				if next == StatusPublished && !c.PublishedAt.Equal(now.Time) {
					t.Errorf("%s of %s: published_at %v, want now", name, from, c.PublishedAt)
				}
			}
		}
	}
	// A comment published before keeps its published_at.
	before := admin.Time{Time: now.Add(-time.Hour)}
	c := Comment{Status: StatusSpam, PublishedAt: before}
	if _, err := actionNamed("not_spam").apply(&c, now); err != nil || !c.PublishedAt.Equal(before.Time) {
		t.Errorf("not_spam: published_at %v (err %v), want %v", c.PublishedAt, err, before)
	}
}

func TestInputValidation(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name   string
		in     Input
		create bool
		fields []string
	}{
		{"create needs author, body and email", Input{}, true, []string{"author", "body", "email"}},
		{"update of nothing", Input{}, false, nil},
		{"blank author", Input{Author: s("  ")}, false, []string{"author"}},
		{"long author", Input{Author: s(strings.Repeat("é", maxAuthor+1))}, false, []string{"author"}},
		{"long body", Input{Body: s(strings.Repeat("x", maxBody+1))}, false, []string{"body"}},
		{"bad email", Input{Email: s("a b@example.com")}, false, []string{"email"}},
		{"published_at not a string", Input{PublishedAt: []byte("1")}, false, []string{"published_at"}},
		{"published_at on create is ignored", Input{Author: s("a"), Body: s("b"), Email: s("a@example.com"), PublishedAt: []byte("1")}, true, nil},
		{"valid", Input{Author: s(" Bob "), Body: s("*hi*"), Email: s("bob@example.com")}, true, nil},
	} {
		var v admin.Validation
		var c Comment
		tc.in.apply(&v, &c, tc.create, time.UTC)
		for _, f := range tc.fields {
			if !v.Has(f) {
				t.Errorf("%s: no message on %s (%v)", tc.name, f, v.Err())
			}
		}
		if len(tc.fields) == 0 && v.Err() != nil {
			t.Errorf("%s: %v", tc.name, v.Err())
		}
	}
}
