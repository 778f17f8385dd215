package record

import (
	"time"

	"github.com/tokentop/tokentop/telemetry"
)

// SnapshotAt returns the snapshot a store fed with the recording would
// have given at t over window (`tokentop replay FILE --json --at TIME`). A
// zero t means the recording's last observation. Only the segments from
// t − max(window, the store's MaxWindow) are read: a store keeps nothing
// older, and each segment's preamble restores what is sticky (endpoints,
// sources, last values). If the recording is damaged before t, the
// snapshot covers everything before the damage and the *DamageError is
// returned with it.
func SnapshotAt(path string, t time.Time, window time.Duration) (telemetry.Snapshot, error) {
	return snapshotAt(path, t, window, telemetry.DefaultStoreConfig())
}

func snapshotAt(path string, t time.Time, window time.Duration, cfg telemetry.StoreConfig) (telemetry.Snapshot, error) {
	entries, err := loadIndex(path)
	if err != nil {
		return telemetry.Snapshot{}, err
	}
	var damage error
	if t.IsZero() {
		_, t, damage = bounds(path, &entries)
		if t.IsZero() {
			return telemetry.Snapshot{}, damage
		}
	}
	store := telemetry.NewStore(cfg)
	lookback := max(window, store.Config().MaxWindow)
	c, err := openCursor(path, &entries, t.Add(-lookback))
	if err != nil {
		return telemetry.Snapshot{}, err
	}
	c.feedUntil(store, t, nil)
	if c.peek() == nil && damage == nil {
		damage = c.damage()
	}
	if err := c.close(); err != nil && damage == nil {
		damage = err
	}
	return store.Snapshot(t, window), damage
}
