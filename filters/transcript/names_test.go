package transcript

import (
	"strings"
	"testing"
)

// TestNameLists: the lists completion offers are what the parsers take.
func TestNameLists(t *testing.T) {
	for _, n := range DialectList() {
		if _, err := ParseDialect(n); err != nil {
			t.Errorf("dialect %q: %v", n, err)
		}
	}
	if len(DialectList()) != len(Dialects())+1 {
		t.Errorf("DialectList %v misses a dialect of %v", DialectList(), Dialects())
	}
	for _, n := range KindNames() {
		if k, err := ParseKinds(n); err != nil || k.String() != n {
			t.Errorf("kind %q: %v %v", n, k, err)
		}
	}
	if k, _ := ParseKinds(strings.Join(KindNames(), ",")); k != AllKinds {
		t.Errorf("KindNames %v is not every kind", KindNames())
	}
}
