package api_test

// These tests keep template.yaml's operations resources (alarms, the alarm
// topic, failure destinations, concurrency limits, access logs, checkov
// skips) in step with the functions, shared/metrics and docs/operations.md.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/storeadmin/adminapi/shared/metrics"
)

// metricNames are the metrics shared/metrics writes.
var metricNames = []string{
	metrics.DeliveriesSent, metrics.DeliveriesFailed, metrics.DeliveriesRetried, metrics.DeliveriesDeadLettered,
	metrics.DeliveryLatency, metrics.ProviderPolls, metrics.ProviderUpdates, metrics.ProviderFailures,
	metrics.ThemeImportsDone, metrics.ThemeImportsFailed, metrics.CallLimited, metrics.ChangesParked,
}

// deadLetterQueues each need an alarm on their depth.
var deadLetterQueues = []string{"DeliveryDeadLetterQueue", "ThemeImportDeadLetterQueue", "InvocationDeadLetterQueue"}

// concurrencyLimited are the SQS-fed functions whose concurrency is bounded.
var concurrencyLimited = []string{"webhook-dispatch", "theme-import"}

func TestOperations(t *testing.T) {
	root := repoRoot(t)
	res, globals := loadResources(t, filepath.Join(root, "template.yaml"))
	runbook, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkOperations(res, globals, string(runbook)) {
		t.Error(p)
	}
}

// TestOperationsCheckReportsProblems makes sure checkOperations notices a
// function without its alarm, an alarm the runbook does not name, and a
// skip without a reason.
func TestOperationsCheckReportsProblems(t *testing.T) {
	root := repoRoot(t)
	runbook, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		change     func(res map[string]*yaml.Node) (runbook string)
	}{
		{"alarm removed", "RedirectsFunction has no alarm RedirectsErrorsAlarm", func(res map[string]*yaml.Node) string {
			delete(res, "RedirectsErrorsAlarm")
			return string(runbook)
		}},
		{"runbook silent", "docs/operations.md does not name alarm Api5xxAlarm", func(map[string]*yaml.Node) string {
			return strings.ReplaceAll(string(runbook), "Api5xxAlarm", "")
		}},
		{"dead-letter alarm removed", "no alarm watches the depth of ThemeImportDeadLetterQueue", func(res map[string]*yaml.Node) string {
			delete(res, "ThemeImportDeadLetterAlarm")
			return strings.ReplaceAll(string(runbook), "ThemeImportDeadLetterAlarm", "")
		}},
		{"skip without reason", `Table: checkov skip CKV_AWS_119 needs a one-line reason`, func(res map[string]*yaml.Node) string {
			get(res["Table"], "Metadata", "checkov", "skip").Content[0].Content[3].Value = ""
			return string(runbook)
		}},
	} {
		res, globals := loadResources(t, filepath.Join(root, "template.yaml"))
		doc := c.change(res)
		problems := checkOperations(res, globals, doc)
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
			t.Errorf("%s: want a problem containing %q, got:\n%s", c.name, c.want, strings.Join(problems, "\n"))
		}
	}
}

// operationsCheck collects the operational problems of template.yaml's
// resources (res, by logical id) against docs/operations.md (runbook).
type operationsCheck struct {
	res      map[string]*yaml.Node
	globals  *yaml.Node
	runbook  string
	ids      []string // res's logical ids, sorted
	problems []string
}

func (c *operationsCheck) bad(format string, args ...any) {
	c.problems = append(c.problems, "template.yaml: "+fmt.Sprintf(format, args...))
}

func (c *operationsCheck) typeOf(id string) string { return scalar(get(c.res[id], "Type")) }

func checkOperations(res map[string]*yaml.Node, globals *yaml.Node, runbook string) []string {
	ids := make([]string, 0, len(res))
	for id := range res {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	r := &operationsCheck{res: res, globals: globals, runbook: runbook, ids: ids}
	r.checkFunctionAlarms()
	r.checkAlarms()
	r.checkQueues()
	r.checkInvocations()
	r.checkLogsAndTable()
	r.checkCheckovSkips()
	return r.problems
}

// checkFunctionAlarms: every function has its errors-and-throttles alarm.
func (c *operationsCheck) checkFunctionAlarms() {
	for _, id := range c.ids {
		if c.typeOf(id) != "AWS::Serverless::Function" {
			continue
		}
		alarm := strings.TrimSuffix(id, "Function") + "ErrorsAlarm"
		if c.typeOf(alarm) != "AWS::CloudWatch::Alarm" {
			c.bad("%s has no alarm %s (AWS::CloudWatch::Alarm on its Errors and Throttles)", id, alarm)
			continue
		}
		for _, m := range []string{"Errors", "Throttles"} {
			if !watches(c.res[alarm], "AWS/Lambda", m, id) {
				c.bad("%s does not watch %s of %s", alarm, m, id)
			}
		}
	}
}

// checkAlarms: every alarm notifies the topic and is named in the runbook;
// custom metrics are those shared/metrics writes, in its namespace.
func (c *operationsCheck) checkAlarms() {
	namespace := subString(get(c.globals, "Function", "Environment", "Variables", "METRICS_NAMESPACE"))
	if namespace == "" {
		c.bad("Globals: METRICS_NAMESPACE must be a !Sub of the stack's namespace")
	}
	for _, id := range c.ids {
		if c.typeOf(id) != "AWS::CloudWatch::Alarm" {
			continue
		}
		props := get(c.res[id], "Properties")
		for _, key := range []string{"AlarmActions", "OKActions"} {
			if !slices.ContainsFunc(seq(get(props, key)), func(n *yaml.Node) bool { return n.Tag == "!Ref" && n.Value == "AlarmTopic" }) {
				c.bad("%s: %s must include !Ref AlarmTopic", id, key)
			}
		}
		if !strings.Contains(c.runbook, id) {
			c.bad("docs/operations.md does not name alarm %s", id)
		}
		walkNodes(props, func(n *yaml.Node) {
			ns := get(n, "Namespace")
			if ns == nil || ns.Tag != "!Sub" {
				return
			}
			if ns.Value != namespace {
				c.bad("%s: namespace %q is not METRICS_NAMESPACE's %q", id, ns.Value, namespace)
			}
			if name := scalar(get(n, "MetricName")); !slices.Contains(metricNames, name) {
				c.bad("%s: metric %q is none that shared/metrics writes", id, name)
			}
		})
	}
}

// checkQueues: each dead-letter queue is watched by an alarm; every queue
// is encrypted at rest.
func (c *operationsCheck) checkQueues() {
	for _, q := range deadLetterQueues {
		if c.typeOf(q) != "AWS::SQS::Queue" {
			c.bad("no queue %s", q)
			continue
		}
		found := false
		for _, id := range c.ids {
			if c.typeOf(id) == "AWS::CloudWatch::Alarm" && scalar(get(c.res[id], "Properties", "MetricName")) == "ApproximateNumberOfMessagesVisible" {
				for _, d := range seq(get(c.res[id], "Properties", "Dimensions")) {
					found = found || getAtt(get(d, "Value")) == q+".QueueName"
				}
			}
		}
		if !found {
			c.bad("no alarm watches the depth of %s", q)
		}
	}
	// Every queue is encrypted at rest.
	for _, id := range c.ids {
		if c.typeOf(id) == "AWS::SQS::Queue" && scalar(get(c.res[id], "Properties", "SqsManagedSseEnabled")) != "true" && get(c.res[id], "Properties", "KmsMasterKeyId") == nil {
			c.bad("%s: no encryption at rest (SqsManagedSseEnabled or KmsMasterKeyId)", id)
		}
	}
}

// checkInvocations: failures of asynchronous and stream invocations are
// kept; bounded concurrency agrees with the SQS poller's maximum.
func (c *operationsCheck) checkInvocations() {
	for _, d := range scheduledFunctions {
		id := functionID(d)
		if getAtt(get(c.res[id], "Properties", "DeadLetterQueue", "TargetArn")) != "InvocationDeadLetterQueue.Arn" {
			c.bad("%s: DeadLetterQueue must target InvocationDeadLetterQueue (failed scheduled runs)", id)
		}
	}
	for _, e := range eventSourceFunctions {
		if e.Type != "DynamoDB" {
			continue
		}
		id := functionID(e.Dir)
		for _, ev := range mapping(get(c.res[id], "Properties", "Events")) {
			if scalar(get(ev, "Type")) == "DynamoDB" && getAtt(get(ev, "Properties", "DestinationConfig", "OnFailure", "Destination")) != "InvocationDeadLetterQueue.Arn" {
				c.bad("%s: its stream event needs DestinationConfig.OnFailure on InvocationDeadLetterQueue", id)
			}
		}
	}
	// Bounded concurrency: the reservation and the SQS poller's maximum agree.
	for _, d := range concurrencyLimited {
		id := functionID(d)
		reserved := get(c.res[id], "Properties", "ReservedConcurrentExecutions")
		if reserved == nil {
			c.bad("%s: no ReservedConcurrentExecutions", id)
			continue
		}
		for _, ev := range mapping(get(c.res[id], "Properties", "Events")) {
			if scalar(get(ev, "Type")) != "SQS" {
				continue
			}
			max := get(ev, "Properties", "ScalingConfig", "MaximumConcurrency")
			if max == nil || max.Tag != reserved.Tag || max.Value != reserved.Value {
				c.bad("%s: its SQS event's ScalingConfig.MaximumConcurrency must equal ReservedConcurrentExecutions (else throttled messages come back with their attempt count raised)", id)
			}
		}
	}
}

// checkLogsAndTable: the table cannot be deleted by accident; the API logs
// every request, without the path.
func (c *operationsCheck) checkLogsAndTable() {
	if scalar(get(c.res["Table"], "Properties", "DeletionProtectionEnabled")) != "true" {
		c.bad("Table: DeletionProtectionEnabled must be true")
	}
	logs := get(c.res["HttpApi"], "Properties", "AccessLogSettings")
	if getAtt(get(logs, "DestinationArn")) != "ApiAccessLogGroup.Arn" || get(c.res["ApiAccessLogGroup"], "Properties", "RetentionInDays") == nil {
		c.bad("HttpApi: AccessLogSettings must write to ApiAccessLogGroup, which needs a RetentionInDays")
	}
	if f := scalar(get(logs, "Format")); !strings.Contains(f, "$context.requestId") || strings.Contains(f, "$context.path") {
		c.bad("HttpApi: the access log format needs $context.requestId and must not log $context.path (a charge confirmation path holds its secret)")
	}
}

// checkCheckovSkips: each skip with its reason on one line.
func (c *operationsCheck) checkCheckovSkips() {
	skipID := regexp.MustCompile(`^CKV2?_AWS_[0-9]+$`)
	for _, id := range c.ids {
		for _, s := range seq(get(c.res[id], "Metadata", "checkov", "skip")) {
			check, reason := scalar(get(s, "id")), scalar(get(s, "comment"))
			if !skipID.MatchString(check) {
				c.bad("%s: checkov skip id %q", id, check)
			}
			if len(reason) < 20 || strings.Contains(reason, "\n") {
				c.bad("%s: checkov skip %s needs a one-line reason", id, check)
			}
		}
	}
}

// loadResources returns template.yaml's resources by logical id, and its
// Globals.
func loadResources(t *testing.T, path string) (map[string]*yaml.Node, *yaml.Node) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 {
		t.Fatalf("%s: %v", path, err)
	}
	return mapping(get(doc.Content[0], "Resources")), get(doc.Content[0], "Globals")
}

// watches reports whether an alarm reads metric name of namespace ns with
// a FunctionName dimension of !Ref fn.
func watches(alarm *yaml.Node, ns, name, fn string) bool {
	found := false
	walkNodes(alarm, func(n *yaml.Node) {
		if scalar(get(n, "Namespace")) != ns || scalar(get(n, "MetricName")) != name {
			return
		}
		for _, d := range seq(get(n, "Dimensions")) {
			v := get(d, "Value")
			found = found || scalar(get(d, "Name")) == "FunctionName" && v != nil && v.Tag == "!Ref" && v.Value == fn
		}
	})
	return found
}

// walkNodes calls fn on n and every node under it.
func walkNodes(n *yaml.Node, fn func(*yaml.Node)) {
	if n == nil {
		return
	}
	fn(n)
	for _, c := range n.Content {
		walkNodes(c, fn)
	}
}

func mapping(n *yaml.Node) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = n.Content[i+1]
		}
	}
	return m
}

func seq(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// subString is the template of a !Sub scalar, "" for anything else.
func subString(n *yaml.Node) string {
	if n == nil || n.Tag != "!Sub" || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}
