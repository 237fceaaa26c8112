package metrics_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/metrics/metricstest"
)

// Every kind of line parses as EMF: "_aws" with a Timestamp and
// CloudWatchMetrics (Namespace, Dimensions, Metrics), and each named
// dimension and metric at the top level with its value.
func TestLinesAreEMF(t *testing.T) {
	m := metrics.New(io.Discard, "StoreAdmin/test-stack")
	rec := metricstest.Capture(t, m)
	ctx := context.Background()
	m.Delivery(ctx, metrics.Sent, 12500*time.Microsecond)
	m.Delivery(ctx, metrics.Retried, 5*time.Second)
	m.Delivery(ctx, metrics.DeadLettered, time.Millisecond)
	m.ProviderPoll(ctx, "fetch_stock", 3, 1)
	m.ThemeImport(ctx, true)
	m.ThemeImport(ctx, false)
	m.CallLimit(ctx, 42)

	lines := rec.Lines(t) // each checked by metricstest.Check
	if len(lines) != 7 {
		t.Fatalf("%d lines, want 7", len(lines))
	}
	for _, l := range lines {
		if l["msg"] != "metrics" || l["level"] != "INFO" || l["time"] == nil {
			t.Errorf("not a slog JSON record: %v", l)
		}
		for _, d := range l["_aws"].(map[string]any)["CloudWatchMetrics"].([]any) {
			if ns := d.(map[string]any)["Namespace"]; ns != "StoreAdmin/test-stack" {
				t.Errorf("namespace %v", ns)
			}
		}
	}
	want := []map[string]any{
		{"DeliveriesSent": 1.0, "DeliveriesFailed": 0.0, "DeliveriesRetried": 0.0, "DeliveriesDeadLettered": 0.0, "Outcome": "sent", "DeliveryLatency": 12.5},
		{"DeliveriesSent": 0.0, "DeliveriesFailed": 1.0, "DeliveriesRetried": 1.0, "DeliveriesDeadLettered": 0.0, "Outcome": "failed", "DeliveryLatency": 5000.0},
		{"DeliveriesFailed": 1.0, "DeliveriesRetried": 0.0, "DeliveriesDeadLettered": 1.0, "Outcome": "failed"},
		{"Job": "fetch_stock", "ProviderPolls": 1.0, "ProviderUpdates": 3.0, "ProviderFailures": 1.0},
		{"ThemeImportsDone": 1.0, "ThemeImportsFailed": 0.0},
		{"ThemeImportsDone": 0.0, "ThemeImportsFailed": 1.0},
		{"AppId": "42", "CallLimited": 1.0},
	}
	for i, w := range want {
		for k, v := range w {
			if lines[i][k] != v {
				t.Errorf("line %d: %s = %v, want %v", i, k, lines[i][k], v)
			}
		}
	}

	// The delivery line: counts without dimensions, latency by Outcome.
	dirs := lines[0]["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)
	if len(dirs) != 2 {
		t.Fatalf("delivery line: %d directives, want 2", len(dirs))
	}
	if got := dimensions(dirs[0]); got != "[]" {
		t.Errorf("delivery counts dimensions %s, want []", got)
	}
	if got := dimensions(dirs[1]); got != "[Outcome]" {
		t.Errorf("delivery latency dimensions %s, want [Outcome]", got)
	}
	if got := dimensions(lines[6]["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0]); got != "[AppId]" {
		t.Errorf("call limit dimensions %s, want [AppId]", got)
	}
}

func dimensions(d any) string {
	var names []string
	for _, set := range d.(map[string]any)["Dimensions"].([]any) {
		var s []string
		for _, n := range set.([]any) {
			s = append(s, n.(string))
		}
		names = append(names, "["+strings.Join(s, ",")+"]")
	}
	return strings.Join(names, " ")
}

// The checker refuses what CloudWatch would not turn into metrics, so that
// TestLinesAreEMF proves something.
func TestCheckRefusesWhatIsNotEMF(t *testing.T) {
	good := `{"_aws":{"Timestamp":1764086400000,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["App"]],"Metrics":[{"Name":"M","Unit":"Count"}]}]},"App":"1","M":1}`
	if _, err := metricstest.Check([]byte(good)); err != nil {
		t.Fatalf("a valid line refused: %v", err)
	}
	for name, line := range map[string]string{
		"not JSON":           `level=INFO msg=metrics M=1`,
		"no _aws":            `{"M":1}`,
		"no timestamp":       `{"_aws":{"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"M"}]}]},"M":1}`,
		"timestamp a string": `{"_aws":{"Timestamp":"now","CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"M"}]}]},"M":1}`,
		"no directives":      `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[]},"M":1}`,
		"no namespace":       `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Dimensions":[[]],"Metrics":[{"Name":"M"}]}]},"M":1}`,
		"no dimensions":      `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Metrics":[{"Name":"M"}]}]},"M":1}`,
		"dimension missing":  `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["App"]],"Metrics":[{"Name":"M"}]}]},"M":1}`,
		"dimension a number": `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["App"]],"Metrics":[{"Name":"M"}]}]},"App":1,"M":1}`,
		"no metrics":         `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[]}]}}`,
		"value missing":      `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"M"}]}]}}`,
		"value nested":       `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"M"}]}]},"x":{"M":1}}`,
		"value a string":     `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"M"}]}]},"M":"1"}`,
		"unknown unit":       `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"M","Unit":"ms"}]}]},"M":1}`,
	} {
		if _, err := metricstest.Check([]byte(line)); err == nil {
			t.Errorf("%s: accepted %s", name, line)
		}
	}
}
