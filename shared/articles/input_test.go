package articles

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Validation of an article's input, without the store.
func TestInputApply(t *testing.T) {
	s := func(v string) *string { return &v }
	manyTags := make([]string, maxTags+1)
	for i := range manyTags {
		manyTags[i] = "t" + strings.Repeat("x", i)
	}
	for _, tc := range []struct {
		name   string
		in     Input
		create bool
		fields []string
	}{
		{"create needs a title", Input{}, true, []string{"title"}},
		{"update of nothing", Input{}, false, nil},
		{"blank title", Input{Title: s(" ")}, false, []string{"title"}},
		{"long title", Input{Title: s(strings.Repeat("é", 256))}, false, []string{"title"}},
		{"bad handle", Input{Handle: s("Not A Handle")}, false, []string{"handle"}},
		{"blank author on update", Input{Author: s(" ")}, false, []string{"author"}},
		{"long tag", Input{Tags: s(strings.Repeat("x", maxTag+1))}, false, []string{"tags"}},
		{"too many tags", Input{Tags: s(strings.Join(manyTags, ","))}, false, []string{"tags"}},
		{"published_at a number", Input{PublishedAt: json.RawMessage("5")}, false, []string{"published_at"}},
		{"published_at not a date", Input{PublishedAt: json.RawMessage(`"soon"`)}, false, []string{"published_at"}},
		{"valid", Input{Title: s(" Hello "), Handle: s("hello"), Tags: s("b, a, b"), PublishedAt: json.RawMessage(`"2024-03-11T10:00:00Z"`)}, true, nil},
	} {
		var a Article
		_, _, err := tc.in.apply(&a, tc.create, time.UTC)
		got := ""
		if err != nil {
			got = err.Error()
		}
		for _, f := range tc.fields {
			if !strings.Contains(got, " "+f+"=") {
				t.Errorf("%s: %q names no %s", tc.name, got, f)
			}
		}
		if len(tc.fields) == 0 && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// What apply merges: the trimmed title, tags normalized, a null
	// published_at hides the article.
	var a Article
	pub, _, err := (&Input{Title: s(" Hello "), Tags: s("b, a, b"), PublishedAt: json.RawMessage("null")}).apply(&a, true, time.UTC)
	if err != nil || a.Title != "Hello" || a.Tags != "a, b" || pub.published == nil || *pub.published {
		t.Errorf("apply: %+v, published %v, err %v", a, pub.published, err)
	}
}
