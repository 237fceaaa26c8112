package clock

import (
	"testing"
	"time"
)

func TestOffsetOnlyMovesForward(t *testing.T) {
	var o Offset
	o.Advance(48 * time.Hour)
	o.Advance(-time.Hour)
	if got := o.Offset(); got != 48*time.Hour {
		t.Fatalf("offset %v, want 48h", got)
	}
	if ahead := time.Until(o.Now()); ahead < 47*time.Hour {
		t.Fatalf("Now is %v ahead, want about 48h", ahead)
	}
	o.Reset()
	if o.Offset() != 0 {
		t.Fatal("Reset left an offset")
	}
}

func TestFixed(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	f := NewFixed(start)
	f.Advance(time.Second)
	if !f.Now().Equal(start.Add(time.Second)) {
		t.Fatalf("Now %v", f.Now())
	}
}
