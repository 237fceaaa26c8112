//go:build !race

package faults_test

// soakScale is how many clients each store gets, and how many changes
// each client makes: the embedded store takes more, DynamoDB Local (one
// request at a time) fewer, so that the soak stays seconds of the suite.
var soakScale = map[string][2]int{"embedded": {8, 300}, "dynamodb": {3, 80}}

// keylessScale: clients and changes each of the keyless soak.
var keylessScale = map[string][2]int{"embedded": {8, 150}, "dynamodb": {3, 40}}

// keylessNeedsApplied: the full-size run must have met writes that failed
// after they were applied, or it proved nothing.
const keylessNeedsApplied = true
