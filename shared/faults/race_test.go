//go:build race

package faults_test

// Under the race detector (make test's Go test pass) the soak is small: it
// is there for the detector to watch concurrent clients, retries and the
// pipeline. make test's volume stage runs it at full size without it.
var soakScale = map[string][2]int{"embedded": {4, 50}, "dynamodb": {2, 25}}

var keylessScale = map[string][2]int{"embedded": {4, 40}, "dynamodb": {2, 15}}

// keylessNeedsApplied: at this size a run may see no write fail after it
// was applied (at 30% faults and a fifth of failed writes applied, about
// one DynamoDB run in twelve), so only the full-size run insists on one.
const keylessNeedsApplied = false
