package table

// ShownNames lists the names of the rows the table shows (the filter's,
// replicas of an expanded model included), the selected row first, then
// the others in table order.
func (m *Model) ShownNames() []string {
	if len(m.rows) == 0 {
		return nil
	}
	out := []string{m.rows[m.cursor].Name()}
	for i, r := range m.rows {
		if i != m.cursor {
			out = append(out, r.Name())
		}
	}
	return out
}
