#!/usr/bin/env bash
# Reads go test's output and prints, per package group, how many packages
# ran, the sum of their times and the slowest one: where the Go tests'
# time goes (infra/test.sh prints it at the end of make test).
awk -F'\t' '
$1 ~ /^(ok|FAIL) *$/ && $3 ~ /s$/ {
	pkg = $2; sub(/^[^\/]*\/[^\/]*\/[^\/]*\//, "", pkg) # drop the module path
	secs = $3 + 0
	if (pkg ~ /^shared\/(store|queue)(\/|$)/) group = "storage and queues"
	else if (pkg ~ /^shared\/(delivery|providers)$/) group = "pipelines (delivery, providers)"
	else if (pkg ~ /^shared\/api$/ || pkg ~ /^infra\// || pkg ~ /^functions\//) group = "composition (api, local runner, mains)"
	else if (pkg ~ /^shared\/(admin|dates|records|handles|publishing|events|images|catalog|parents|ratelimit|outbox|httpapi|outbound|ids|platform|seed|metrics|auth|config|textile|apitest|emulatortest)(\/|$)/) group = "conventions and platform"
	else group = "resources"
	n[group]++; sum[group] += secs
	if (secs > max[group]) { max[group] = secs; slowest[group] = pkg }
}
END {
	printf "  %-40s %8s %9s  %s\n", "group", "packages", "seconds", "slowest"
	for (g in n) printf "  %-40s %8d %9.0f  %s (%.0f s)\n", g, n[g], sum[g], slowest[g], max[g]
}' | { read -r header; echo "$header"; sort -t$'\t' -k1,1; }
