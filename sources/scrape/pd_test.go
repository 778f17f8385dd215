package scrape

import (
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// A target configured with its role in a disaggregated model announces
// its endpoint with it, so the views can put the model's workers into
// pools; a target without one says nothing.
func TestRoleLabel(t *testing.T) {
	page := nixlPage("10", "0.05", "1e9", "0")
	for _, role := range []string{telemetry.RoleDecode, ""} {
		obs := scrapePages(t, Config{Role: role}, page)
		ep := onlyEndpoint(t, obs)
		got, set := one(t, obs, telemetry.KindEndpoint, ep, "").Info.Labels[telemetry.LabelRole]
		if got != role || set != (role != "") {
			t.Errorf("role %q: endpoint label %q (set %v)", role, got, set)
		}
	}
}
