package delivery

import (
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/webhooks"
)

// Every topic has a sample (by its group) that renders as JSON and XML.
func TestEveryTopicHasASample(t *testing.T) {
	for _, topic := range webhooks.Topics {
		group, _, _ := strings.Cut(topic, "/")
		s, ok := samples()[group]
		if !ok || s.Resource == "" || len(s.Payload) == 0 {
			t.Errorf("%s: no sample for %q in samples.json", topic, group)
			continue
		}
		if _, err := toXML(s.Resource, s.Payload); err != nil {
			t.Errorf("%s: the sample does not render as XML: %v", topic, err)
		}
	}
}
