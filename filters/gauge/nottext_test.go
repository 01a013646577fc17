package gauge

import (
	"maps"
	"slices"
	"testing"

	"github.com/bstools/bs/filters/transcript"
)

// TestRegisteredNotText: the members whose strings the gauge does not
// count are those the built-in dialects name, together: a dialect that
// drops one counts its signatures or ids as text, in every runtime's
// lines.
func TestRegisteredNotText(t *testing.T) {
	want := []string{
		"api", "call_id", "data", "encrypted_content", "id", "image_url", "media_type", "mimeType", "model",
		"partialJson", "provider", "role", "signature", "status", "stopReason", "stop_reason", "textSignature",
		"thinkingSignature", "thoughtSignature", "timestamp", "toolCallId", "tool_use_id", "type",
	}
	if got := slices.Sorted(maps.Keys(transcript.RegisteredNotText())); !slices.Equal(got, want) {
		t.Errorf("RegisteredNotText = %q, want %q", got, want)
	}
}
