package admingraphql

import (
	"testing"

	"github.com/storeadmin/adminapi/shared/graphql"
)

// A typical app query: parsed, validated against the schema and priced
// (the bound: 100 µs).
func BenchmarkPrepare(b *testing.B) {
	s := Schema(Service{})
	req := &graphql.Request{Query: `query Pages($first: Int!, $after: String) {
		shop { name myshopifyDomain }
		pages(first: $first, after: $after, query: "published_status:published") {
			edges { cursor node { id title handle body isPublished publishedAt updatedAt } }
			pageInfo { hasNextPage endCursor }
		}
	}`, Variables: map[string]any{"first": int64(50)}}
	if _, errs := s.Prepare(req); errs != nil {
		b.Fatal(errs[0])
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := s.Prepare(req); errs != nil {
			b.Fatal(errs[0])
		}
	}
}
