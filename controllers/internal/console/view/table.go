package view

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strings"
)

// Table is one table of a page as CSV and JSON export write it: a header
// and rows of cells, in the page's order (every page of a paginated table).
type Table struct {
	Name    string
	Columns []string
	Rows    [][]string
}

// WriteCSV writes the header and the rows as RFC 4180 CSV. A cell that a
// spreadsheet would run as a formula (starting with =, +, - or @) is
// prefixed with a quote, so that a name a tenant chose cannot run as one.
func (t Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
		return err
	}
	for _, row := range t.Rows {
		safe := make([]string, len(row))
		for i, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				cell = "'" + cell
			}
			safe[i] = cell
		}
		if err := cw.Write(safe); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the rows as a JSON array of objects keyed by column.
func (t Table) WriteJSON(w io.Writer) error {
	out := make([]map[string]string, 0, len(t.Rows))
	for _, row := range t.Rows {
		obj := make(map[string]string, len(t.Columns))
		for i, c := range t.Columns {
			if i < len(row) {
				obj[c] = row[i]
			}
		}
		out = append(out, obj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
