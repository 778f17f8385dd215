package record

import (
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// SnapshotAt returns the snapshot a store fed with the recording would
// have given at t over window (`ttftop replay FILE --json --at TIME`). A
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
	var damage error
	if t.IsZero() {
		_, t, damage = Bounds(path)
		if t.IsZero() {
			return telemetry.Snapshot{}, damage
		}
	}
	store := telemetry.NewStore(cfg)
	err := Feed(path, t.Add(-max(window, store.Config().MaxWindow)), t, store)
	if damage == nil {
		damage = err
	}
	if err != nil && !isDamage(err) {
		return telemetry.Snapshot{}, err
	}
	return store.Snapshot(t, window), damage
}

// Feed feeds sink the recording from the segment holding from (its
// preamble first: the state before it, alert state included for an
// AlertSink) through t. It returns the *DamageError that stopped reading
// before t, if any, after feeding everything before the damage.
func Feed(path string, from, t time.Time, sink telemetry.Sink) error {
	entries, err := loadIndex(path)
	if err != nil {
		return err
	}
	c, err := openCursor(path, &entries, from)
	if err != nil {
		return err
	}
	c.feedUntil(sink, t, nil)
	var damage error
	if c.peek() == nil {
		damage = c.damage()
	}
	if err := c.close(); err != nil && damage == nil {
		damage = err
	}
	return damage
}
