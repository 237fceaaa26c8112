package records

import (
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/store"
)

// Plan is what a list's filters give to read from: every record in id
// order (All), and, for each given filter that has index entries, where
// they are (Keyed, most selective first). Source picks the first; the
// matcher checks the rest on what it yields, so a request reads at most
// the matches of its most selective filter.
type Plan struct {
	All     store.Query
	Keyed   []Keyed
	Given   int         // filters given besides since_id and created_at, if more than Keyed
	Created dates.Range // created_at: the id's second, a key range of id-ordered entries
	SinceID int64
}

// Keyed is the entries of one filter.
type Keyed struct {
	Query   store.Query // id-ordered, unless Timed
	Timed   bool        // Query is a TimePartition bounded to the filter's range
	Answers int         // given filters the entries answer whole (0 means 1)
	Inexact bool        // the partition may hold other values (a hashed one)
	Ref     bool        // the entries are Ref entries (ListRefWindow reads them)
}

// Refs reports whether the source Source picks holds Ref entries.
func (p Plan) Refs() bool { return len(p.Keyed) > 0 && p.Keyed[0].Ref }

// Exact is the entries of the records whose field equals value, in a
// counted ExactPartition of partition.
func Exact(partition, field, value string) Keyed {
	return Keyed{Query: store.Query{PK: ExactPartition(partition, field, value)}, Inexact: len(value) > maxExactValue}
}

// Timed is the entries of the records whose field lies in r, in the
// TimePartition of partition.
func Timed(partition, field string, r dates.Range) Keyed {
	q := store.Query{PK: TimePartition(partition, field)}
	q.After, q.Before = TimeRange(r)
	return Keyed{Query: q, Timed: true}
}

// Source is the query a list or count reads, and whether its keys answer
// every filter (then no matcher is needed and a page reads limit+1 items).
// since_id and created_at bound an id-ordered source by key; a timed one
// leaves them to the matcher.
func (p Plan) Source() (q store.Query, exact bool) {
	given := max(p.Given, len(p.Keyed))
	q, exact, idOrdered := p.All, given == 0, true
	if len(p.Keyed) > 0 {
		k := p.Keyed[0]
		q, idOrdered = k.Query, !k.Timed
		exact = !k.Inexact && max(k.Answers, 1) >= given
	}
	if !idOrdered {
		return q, exact && p.SinceID == 0 && p.Created.Empty()
	}
	if p.SinceID > 0 {
		q.After = IDSK(p.SinceID)
	}
	after, before := IDRange(p.Created)
	return Tighten(q, after, before), exact
}

// Read is Source with the matcher a read needs: nil when the keys answer
// every filter, else match.
func (p Plan) Read(match Matcher) (store.Query, Matcher) {
	q, exact := p.Source()
	if exact {
		return q, nil
	}
	return q, match
}
