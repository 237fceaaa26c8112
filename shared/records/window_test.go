package records

import (
	"fmt"
	"slices"
	"testing"

	"github.com/storeadmin/adminapi/shared/store"
)

func TestSortKey(t *testing.T) {
	it := store.Item{SK: "t", GSI1SK: "g1", GSI2SK: "g2"}
	for index, want := range map[string]string{store.Table: "t", store.GSI1: "g1", store.GSI2: "g2"} {
		if got := SortKey(&it, index); got != want {
			t.Errorf("SortKey(%q) = %q, want %q", index, got, want)
		}
	}
}

// SliceWindow pages forward by next cursors and back by previous ones to
// the same pages, with links only where there are items.
func TestSliceWindow(t *testing.T) {
	all := []int{2, 3, 5, 7, 11}
	key := func(n *int) string { return fmt.Sprintf("%04d", *n) }
	page, span := SliceWindow(all, key, Window{Limit: 2})
	var pages [][]int
	for {
		pages = append(pages, page)
		if !span.After {
			break
		}
		page, span = SliceWindow(all, key, Window{Limit: 2, Cursor: Cursor{Key: span.Last}})
	}
	if want := [][]int{{2, 3}, {5, 7}, {11}}; !slices.EqualFunc(pages, want, slices.Equal) {
		t.Fatalf("pages %v, want %v", pages, want)
	}
	for i := len(pages) - 1; i > 0; i-- {
		if !span.Before {
			t.Fatalf("page %d: no previous", i+1)
		}
		page, span = SliceWindow(all, key, Window{Limit: 2, Cursor: Cursor{Key: span.First, Back: true}})
		if !slices.Equal(page, pages[i-1]) {
			t.Fatalf("previous of page %d: %v, want %v", i+1, page, pages[i-1])
		}
	}
	if span.Before || !span.After {
		t.Fatalf("first page reached back: %+v", span)
	}
	// A cursor between items (its item gone) and past the end.
	if page, span = SliceWindow(all, key, Window{Limit: 2, Cursor: Cursor{Key: "0004"}}); !slices.Equal(page, []int{5, 7}) || !span.Before || !span.After {
		t.Errorf("after 0004: %v %+v", page, span)
	}
	if page, span = SliceWindow(all, key, Window{Limit: 2, Cursor: Cursor{Key: "0012"}}); len(page) != 0 || span.After || !span.Before {
		t.Errorf("after the end: %v %+v", page, span)
	}
	if page, span = SliceWindow(all, key, Window{Limit: 2, Cursor: Cursor{Key: "0002", Back: true}}); len(page) != 0 || span.Before || !span.After {
		t.Errorf("before the start: %v %+v", page, span)
	}
	if page, span = SliceWindow(all, key, Window{Offset: 4, Limit: 2}); !slices.Equal(page, []int{11}) || !span.Before || span.After {
		t.Errorf("offset 4: %v %+v", page, span)
	}
}
