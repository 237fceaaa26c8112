// Package apipermissions serves DELETE /admin/api_permissions/current.json,
// which uninstalls the calling app, as in the original API: its
// app/uninstalled webhooks are delivered (signed with its secret), its token
// is revoked, its script tags, webhooks and fulfillment services are deleted,
// and its active recurring charge is cancelled.
package apipermissions

// Topic is the topic fired by an uninstall.
const Topic = "app/uninstalled"
