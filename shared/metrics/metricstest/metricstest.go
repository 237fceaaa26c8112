// Package metricstest captures the metric lines of shared/metrics in tests
// and checks that each is a valid CloudWatch embedded metric format (EMF)
// record, as CloudWatch Logs reads one.
package metricstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/storeadmin/adminapi/shared/metrics"
)

// Recorder holds the lines written while it captures.
type Recorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *Recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

// Capture sends m's lines to a Recorder until the test ends.
func Capture(t testing.TB, m *metrics.Recorder) *Recorder {
	r := &Recorder{}
	t.Cleanup(m.SetOutput(r))
	return r
}

// Lines returns every line so far, decoded; a line that is not valid EMF
// fails the test.
func (r *Recorder) Lines(t testing.TB) []map[string]any {
	t.Helper()
	r.mu.Lock()
	data := bytes.Clone(r.buf.Bytes())
	r.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		m, err := Check(line)
		if err != nil {
			t.Fatalf("not an EMF line: %v\n%s", err, line)
		}
		out = append(out, m)
	}
	return out
}

// With returns the lines that carry metric name, and, for each name=value
// pair of dims, that dimension value.
func (r *Recorder) With(t testing.TB, name string, dims ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range r.Lines(t) {
		if _, ok := l[name]; !ok {
			continue
		}
		match := true
		for i := 0; i+1 < len(dims); i += 2 {
			match = match && l[dims[i]] == dims[i+1]
		}
		if match {
			out = append(out, l)
		}
	}
	return out
}

// Sum adds up metric name over lines.
func Sum(lines []map[string]any, name string) float64 {
	total := 0.0
	for _, l := range lines {
		v, _ := l[name].(float64)
		total += v
	}
	return total
}

// Units CloudWatch accepts.
var units = map[string]bool{"Seconds": true, "Microseconds": true, "Milliseconds": true, "Bytes": true,
	"Kilobytes": true, "Megabytes": true, "Gigabytes": true, "Terabytes": true, "Bits": true, "Kilobits": true,
	"Megabits": true, "Gigabits": true, "Terabits": true, "Percent": true, "Count": true, "Bytes/Second": true,
	"Kilobytes/Second": true, "Megabytes/Second": true, "Gigabytes/Second": true, "Terabytes/Second": true,
	"Bits/Second": true, "Kilobits/Second": true, "Megabits/Second": true, "Gigabits/Second": true,
	"Terabits/Second": true, "Count/Second": true, "None": true}

// Check decodes one log line and checks it against the EMF specification:
// a JSON object whose "_aws" member has an integer Timestamp (epoch
// milliseconds) and a non-empty CloudWatchMetrics array of directives, each
// with a Namespace, Dimensions (arrays of at most 30 dimension names, each
// naming a top-level string member) and Metrics (1 to 100 definitions, each
// with a Name naming a top-level number, or array of at most 100 numbers,
// and a valid Unit).
func Check(line []byte) (map[string]any, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value on the line")
	}
	aws, ok := m["_aws"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf(`no "_aws" object`)
	}
	ts, ok := aws["Timestamp"].(float64)
	if !ok || ts != float64(int64(ts)) || ts <= 0 {
		return nil, fmt.Errorf("_aws.Timestamp %v is not epoch milliseconds", aws["Timestamp"])
	}
	dirs, ok := aws["CloudWatchMetrics"].([]any)
	if !ok || len(dirs) == 0 {
		return nil, fmt.Errorf("_aws.CloudWatchMetrics is not a non-empty array")
	}
	for i, d := range dirs {
		dir, ok := d.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("directive %d is not an object", i)
		}
		if ns, ok := dir["Namespace"].(string); !ok || ns == "" || len(ns) > 255 {
			return nil, fmt.Errorf("directive %d: Namespace %v", i, dir["Namespace"])
		}
		sets, ok := dir["Dimensions"].([]any)
		if !ok {
			return nil, fmt.Errorf("directive %d: Dimensions is not an array", i)
		}
		for _, s := range sets {
			set, ok := s.([]any)
			if !ok || len(set) > 30 {
				return nil, fmt.Errorf("directive %d: a dimension set is not an array of at most 30 names", i)
			}
			for _, k := range set {
				name, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("directive %d: dimension name %v is not a string", i, k)
				}
				if v, ok := m[name].(string); !ok || v == "" {
					return nil, fmt.Errorf("directive %d: dimension %s has no string value at the top level", i, name)
				}
			}
		}
		defs, ok := dir["Metrics"].([]any)
		if !ok || len(defs) == 0 || len(defs) > 100 {
			return nil, fmt.Errorf("directive %d: Metrics is not an array of 1 to 100 definitions", i)
		}
		for _, md := range defs {
			def, ok := md.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("directive %d: a metric definition is not an object", i)
			}
			name, ok := def["Name"].(string)
			if !ok || name == "" {
				return nil, fmt.Errorf("directive %d: metric without a Name", i)
			}
			if u, ok := def["Unit"]; ok && !units[fmt.Sprint(u)] {
				return nil, fmt.Errorf("metric %s: unit %v", name, u)
			}
			switch v := m[name].(type) {
			case float64:
			case []any:
				if len(v) == 0 || len(v) > 100 {
					return nil, fmt.Errorf("metric %s: %d values", name, len(v))
				}
				for _, x := range v {
					if _, ok := x.(float64); !ok {
						return nil, fmt.Errorf("metric %s: value %v is not a number", name, x)
					}
				}
			default:
				return nil, fmt.Errorf("metric %s has no numeric value at the top level", name)
			}
		}
	}
	return m, nil
}
