package manifest

import "fmt"

// Error is an input problem tied to a place in a file.
type Error struct {
	Pos Position
	Msg string
}

// Error formats the problem as file:line:col: message.
func (e *Error) Error() string {
	if e.Pos.File == "" {
		return e.Msg
	}
	if e.Pos.Line == 0 {
		return fmt.Sprintf("%s: %s", e.Pos.File, e.Msg)
	}
	col := e.Pos.Column
	if col == 0 {
		col = 1
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.Pos.File, e.Pos.Line, col, e.Msg)
}
