package dynamostore

import (
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/storeadmin/adminapi/shared/store"
)

// ChangeOf is the store.Change a record of the table's stream reports (its
// view is NEW_AND_OLD_IMAGES, see CreateTable and template.yaml).
func ChangeOf(r *events.DynamoDBEventRecord) (store.Change, error) {
	var c store.Change
	for _, side := range []struct {
		image map[string]events.DynamoDBAttributeValue
		it    **store.Item
	}{{r.Change.OldImage, &c.Old}, {r.Change.NewImage, &c.New}} {
		if len(side.image) == 0 {
			continue
		}
		m := make(map[string]av, len(side.image))
		for name, v := range side.image {
			switch v.DataType() {
			case events.DataTypeString:
				m[name] = &types.AttributeValueMemberS{Value: v.String()}
			case events.DataTypeNumber:
				m[name] = &types.AttributeValueMemberN{Value: v.Number()}
			}
		}
		it, err := unmarshal(m)
		if err != nil {
			return c, err
		}
		*side.it = &it
	}
	return c, nil
}
