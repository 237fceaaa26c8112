// Package adminapi embeds the documents the service serves about itself.
package adminapi

import _ "embed"

// OpenAPI is docs/openapi.yaml, served as JSON by the local runner at /openapi.json.
//
//go:embed docs/openapi.yaml
var OpenAPI []byte
