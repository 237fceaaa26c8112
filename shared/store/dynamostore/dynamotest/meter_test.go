package dynamotest

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func item(size int, gsi1 string) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "p"},
		"SK": &types.AttributeValueMemberS{Value: "s"},
		"d":  &types.AttributeValueMemberS{Value: strings.Repeat("x", size)},
	}
	if gsi1 != "" {
		it["GSI1PK"] = &types.AttributeValueMemberS{Value: gsi1}
	}
	return it
}

// Write units as DynamoDB bills them: the larger image in whole KB, twice
// in a transaction, plus each index entry written or removed.
func TestWriteUnits(t *testing.T) {
	for _, c := range []struct {
		name          string
		before, after map[string]types.AttributeValue
		factor, want  float64
	}{
		{"a small put", nil, item(10, ""), 1, 1},
		{"a small put in a transaction", nil, item(10, ""), 2, 2},
		{"1.5 KB in a transaction, indexed", nil, item(1500, "g"), 2, 2*2 + 2},
		{"an update to a larger image", item(10, ""), item(2100, ""), 1, 3},
		{"a delete of an indexed item", item(10, "g"), nil, 1, 1 + 1},
		{"an index key that moves", item(10, "g"), item(10, "h"), 1, 1 + 2},
		{"an index key that stays", item(10, "g"), item(10, "g"), 1, 1 + 1},
		{"a refused write of nothing", nil, nil, 2, 2},
	} {
		if got := writeUnits(c.before, c.after, c.factor); got != c.want {
			t.Errorf("%s: %g write units, want %g", c.name, got, c.want)
		}
	}
}

// A refused write is billed for the table only (the meter's handle bills
// it tableKB of its image, twice in a transaction): no index changes.
func TestRefusedWriteBillsTheTableOnly(t *testing.T) {
	if got := 2 * tableKB(item(10, "g"), item(10, "g")); got != 2 {
		t.Errorf("a refused transactional write of an indexed 10-byte item: %v units, want 2", got)
	}
	if got := tableKB(nil, nil); got != 1 {
		t.Errorf("a refused put of a new item: %v units, want 1", got)
	}
}

func TestItemSize(t *testing.T) {
	it := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "abc"},   // 2 + 3
		"n":  &types.AttributeValueMemberN{Value: "12345"}, // 1 + 4
		"b":  &types.AttributeValueMemberBOOL{Value: true}, // 1 + 1
	}
	if got := itemSize(it); got != 12 {
		t.Errorf("size %d, want 12", got)
	}
}
