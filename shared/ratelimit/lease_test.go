package ratelimit_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ratelimit"
)

// Several instances (each its own Shared, as each Lambda instance has)
// take calls of one app's bucket on one table, at random moments and in
// random order, faster than it leaks. Whatever they do, in any span of L
// seconds at most bucket + leak×(L + LeaseTime) calls pass (the stated
// over-admission: leak×LeaseTime), and a bucket that has had time to leak
// out lets a burst of at least bucket − (n−1)×(MostClaimed−1) through.
// Every refusal says how long to wait, and every answer's fill is within
// the bucket.
func TestLeasedBucketBounds(t *testing.T) {
	for _, s := range apitest.Stores {
		t.Run(s.Name, func(t *testing.T) {
			st := s.Open(t)
			clk := clock.NewFixed(time.Unix(1_800_000_000, 0))
			const n = 4
			plan := admin.RatePlan{Bucket: 40, LeakPerSecond: 2}
			app := &admin.App{ID: 7, RateLimit: &plan}
			var inst [n]*ratelimit.Shared
			for i := range inst {
				inst[i] = ratelimit.NewShared(st, clk.Now)
			}
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(1, 2))
			var passed []time.Time
			refused := 0
			steps := 400
			if s.Name != "embedded" {
				steps = 150
			}
			for range steps {
				// Up to 150 ms between arrivals, each of 1 to 4 calls:
				// about 8 calls a second, four times the leak rate.
				clk.Advance(time.Duration(rng.IntN(150)) * time.Millisecond)
				for range 1 + rng.IntN(4) {
					d, err := inst[rng.IntN(n)].Take(ctx, app)
					if err != nil {
						t.Fatal(err)
					}
					switch {
					case d.Used < 1 || d.Used > plan.Bucket || d.Bucket != plan.Bucket:
						t.Fatalf("fill %d/%d", d.Used, d.Bucket)
					case d.Allowed:
						passed = append(passed, clk.Now())
					case d.RetryAfter <= 0 || d.Used != plan.Bucket:
						t.Fatalf("refused with Retry-After %v, fill %d", d.RetryAfter, d.Used)
					default:
						refused++
					}
				}
			}
			if refused == 0 || len(passed) < plan.Bucket {
				t.Fatalf("%d calls passed, %d refused: the bucket was never full", len(passed), refused)
			}
			worst := 0.0
			for i := range passed {
				for j := i; j < len(passed); j++ {
					span := passed[j].Sub(passed[i]).Seconds()
					allowed := float64(plan.Bucket) + plan.LeakPerSecond*(span+ratelimit.LeaseTime.Seconds())
					worst = max(worst, float64(j-i+1)-(float64(plan.Bucket)+plan.LeakPerSecond*span))
					if float64(j-i+1) > allowed {
						t.Fatalf("%d calls passed within %.2f s: more than %.0f", j-i+1, span, allowed)
					}
				}
			}
			t.Logf("%d calls passed over %v; most over Shopify's bucket in any span: %.1f calls (bound %.0f)",
				len(passed), passed[len(passed)-1].Sub(passed[0]), worst, plan.LeakPerSecond*ratelimit.LeaseTime.Seconds())

			// A bucket left to leak out: a burst spread over the instances.
			clk.Advance(time.Minute)
			burst := 0
			for i := range 3 * plan.Bucket {
				if d, err := inst[i%n].Take(ctx, app); err != nil {
					t.Fatal(err)
				} else if d.Allowed {
					burst++
				}
			}
			least := plan.Bucket - (n-1)*(ratelimit.MostClaimed(plan.Bucket)-1)
			if burst > plan.Bucket || burst < least {
				t.Fatalf("a burst let %d calls through, want %d to %d", burst, least, plan.Bucket)
			}
		})
	}
}

// One instance alone keeps Shopify's promises exactly: a burst of the
// bucket's size passes and the next call is refused for one leak
// interval; then one call passes per interval, and the header counts it.
func TestLeasedBucketOneInstance(t *testing.T) {
	st := apitest.OpenEmbedded(t)
	clk := clock.NewFixed(time.Unix(1_800_000_000, 0))
	s := ratelimit.NewShared(st, clk.Now)
	app := &admin.App{ID: 9}
	ctx := context.Background()
	for i := range 40 {
		d, err := s.Take(ctx, app)
		if err != nil || !d.Allowed || d.Used != i+1 {
			t.Fatalf("call %d: %+v %v", i+1, d, err)
		}
	}
	d, _ := s.Take(ctx, app)
	if d.Allowed || d.RetryAfterHeader() != "0.5" || d.Header() != "40/40" {
		t.Fatalf("41st call: %+v", d)
	}
	for i := range 5 {
		clk.Advance(500 * time.Millisecond)
		if d, _ := s.Take(ctx, app); !d.Allowed || d.Header() != "40/40" {
			t.Fatalf("paced call %d: %+v", i, d)
		}
		if d, _ := s.Take(ctx, app); d.Allowed {
			t.Fatalf("a second call within the interval passed: %+v", d)
		}
	}
}

// The GraphQL bucket on the table: one instance spends exactly the
// bucket, refunds come back at once, and several instances together stay
// within Max + Rate×(L + LeaseTime) points in any span of L seconds.
func TestLeasedPointsBounds(t *testing.T) {
	st := apitest.OpenEmbedded(t)
	clk := clock.NewFixed(time.Unix(1_800_000_000, 0))
	plan := ratelimit.PointsPlan{Max: 1000, Rate: 50}
	ctx := context.Background()
	one := &ratelimit.SharedPoints{Store: st, Now: clk.Now, Plan: plan}
	spent := 0.0
	for {
		avail, ok, err := one.Spend(ctx, 1, 30)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if avail >= 30 || spent != 990 || math.Abs(avail-10) > 1e-6 {
				t.Fatalf("refused with %v available after %v spent", avail, spent)
			}
			break
		}
		spent += 30
		if math.Abs(avail-(plan.Max-spent)) > 1e-6 {
			t.Fatalf("after %v spent, %v available", spent, avail)
		}
	}
	if avail, _ := one.Refund(ctx, 1, 20); math.Abs(avail-30) > 1e-6 {
		t.Fatalf("after a refund of 20: %v available", avail)
	}
	if _, ok, _ := one.Spend(ctx, 1, 30); !ok {
		t.Fatal("the refunded points could not be spent")
	}

	const n = 3
	var inst [n]*ratelimit.SharedPoints
	for i := range inst {
		inst[i] = &ratelimit.SharedPoints{Store: st, Now: clk.Now, Plan: plan}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	type spend struct {
		at     time.Time
		points float64
	}
	var log []spend
	for range 600 {
		clk.Advance(time.Duration(rng.IntN(100)) * time.Millisecond)
		cost := float64(10 + rng.IntN(90))
		p := inst[rng.IntN(n)]
		if _, ok, err := p.Spend(ctx, 2, cost); err != nil {
			t.Fatal(err)
		} else if ok {
			used := float64(rng.IntN(int(cost) + 1))
			if _, err := p.Refund(ctx, 2, cost-used); err != nil {
				t.Fatal(err)
			}
			log = append(log, spend{clk.Now(), used})
		}
	}
	for i := range log {
		sum := 0.0
		for j := i; j < len(log); j++ {
			sum += log[j].points
			span := log[j].at.Sub(log[i].at).Seconds()
			if allowed := plan.Max + plan.Rate*(span+ratelimit.LeaseTime.Seconds()); sum > allowed {
				t.Fatalf("%.0f points spent within %.2f s: more than %.0f", sum, span, allowed)
			}
		}
	}
}
