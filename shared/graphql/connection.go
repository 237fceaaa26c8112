package graphql

import (
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
)

// GID is a record's global id, as Shopify writes it: gid://shopify/Page/1.
func GID(typeName string, id int64) string {
	return "gid://shopify/" + typeName + "/" + strconv.FormatInt(id, 10)
}

// ParseGID reads a global id of typeName ("" for any) and returns its type
// and number.
func ParseGID(s, typeName string) (string, int64, error) {
	rest, ok := strings.CutPrefix(s, "gid://shopify/")
	t, num, ok2 := strings.Cut(rest, "/")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || !ok2 || err != nil || n <= 0 || t == "" || (typeName != "" && t != typeName) {
		return "", 0, Errorf("INVALID_ID", "Invalid global id '%s'", s)
	}
	return t, n, nil
}

// Cursor is a connection's opaque cursor of a record id.
func Cursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("id:" + strconv.FormatInt(id, 10)))
}

// ParseCursor reads a Cursor ("" is none: 0).
func ParseCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	num, ok := strings.CutPrefix(string(raw), "id:")
	n, perr := strconv.ParseInt(num, 10, 64)
	if err != nil || !ok || perr != nil || n <= 0 {
		return 0, Errorf("BAD_REQUEST", "Invalid cursor for current pagination sort.")
	}
	return n, nil
}

// Page is what a connection asks of its list, in id order: the Limit
// records after After (or before Before when Back: the last ones), and
// Reverse to answer them newest first.
type Page struct {
	Limit         int
	After, Before int64
	Back, Reverse bool
}

// PageArgs reads first, last, after, before and reverse.
func PageArgs(args map[string]any) (Page, error) {
	n, gerr := PageSize(args)
	if gerr != nil {
		return Page{}, gerr
	}
	p := Page{Limit: n}
	_, p.Back = intArg(args, "last")
	p.Reverse, _ = args["reverse"].(bool)
	var err error
	after, _ := args["after"].(string)
	before, _ := args["before"].(string)
	if p.After, err = ParseCursor(after); err != nil {
		return Page{}, err
	}
	if p.Before, err = ParseCursor(before); err != nil {
		return Page{}, err
	}
	return p, nil
}

// Connection is one page of a connection: its nodes in answer order, their
// ids (for their cursors), and whether there is more on either side.
type Connection struct {
	Type     string // PageConnection
	Nodes    []Object
	IDs      []int64
	HasNext  bool
	HasPrev  bool
	EdgeType string // PageEdge
}

// NewConnection is the connection of type typeName ("PageConnection")
// over nodes and their ids, in list order (ascending ids): it answers
// them reversed when p asks for it.
func NewConnection(typeName string, p Page, nodes []Object, ids []int64, before, after bool) *Connection {
	if p.Reverse {
		slices.Reverse(nodes)
		slices.Reverse(ids)
		before, after = after, before
	}
	return &Connection{Type: typeName, Nodes: nodes, IDs: ids, HasPrev: before, HasNext: after,
		EdgeType: strings.TrimSuffix(typeName, "Connection") + "Edge"}
}

// Len is how many nodes the page holds (the actual cost prices it).
func (c *Connection) Len() int { return len(c.Nodes) }

// TypeName implements Object.
func (c *Connection) TypeName() string { return c.Type }

// Field implements Object.
func (c *Connection) Field(_ context.Context, f *Field) (any, error) {
	switch f.Name {
	case "nodes":
		return c.Nodes, nil
	case "edges":
		edges := make([]Object, len(c.Nodes))
		for i, n := range c.Nodes {
			edges[i] = Map{Type: c.EdgeType, Fields: map[string]any{"cursor": Cursor(c.IDs[i]), "node": n}}
		}
		return edges, nil
	case "pageInfo":
		info := map[string]any{"hasNextPage": c.HasNext, "hasPreviousPage": c.HasPrev, "startCursor": nil, "endCursor": nil}
		if len(c.IDs) > 0 {
			info["startCursor"], info["endCursor"] = Cursor(c.IDs[0]), Cursor(c.IDs[len(c.IDs)-1])
		}
		return Map{Type: "PageInfo", Fields: info}, nil
	}
	return nil, nil
}

// Count is Shopify's Count object: an exact count.
func Count(n int) Object {
	return Map{Type: "Count", Fields: map[string]any{"count": n, "precision": "EXACT"}}
}
