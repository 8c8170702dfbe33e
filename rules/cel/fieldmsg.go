package cel

import "strings"

// The field-message convention lets one validation of a policy report
// several findings, each at the field at fault. A policy opts in with the
// annotation
//
//	kiln.dev/messages: field-path
//
// and its validations then yield messages made of entries
//
//	<field path>: <message>[ | <field path>: <message>…]
//
// where the field path is relative to the object
// ("spec.template.spec.containers[1]", `…resources.limits["nvidia.com/gpu"]`).
// kiln reports one finding per entry, placed at its field, with the
// server's usual text around the entry's message. An entry whose text
// before the first ": " is not a field path keeps the whole text as message
// and no field. An API server shows the message unchanged.
const (
	FieldMessagesAnnotation = "kiln.dev/messages"
	FieldMessagesValue      = "field-path"
	// FieldMessageSeparator separates the entries of one message.
	FieldMessageSeparator = " | "
)

// FieldMessage is one entry of a message that follows the convention.
type FieldMessage struct {
	Field   string
	Message string
}

// SplitFieldMessages splits a message that follows the field-message
// convention into its entries (empty entries are dropped; a message
// without any entry gives one entry with the whole message).
func SplitFieldMessages(msg string) []FieldMessage {
	var out []FieldMessage
	for _, part := range strings.Split(msg, FieldMessageSeparator) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		field, text, ok := strings.Cut(part, ": ")
		if !ok || !isFieldPath(field) {
			out = append(out, FieldMessage{Message: part})
			continue
		}
		out = append(out, FieldMessage{Field: field, Message: text})
	}
	if len(out) == 0 {
		out = append(out, FieldMessage{Message: msg})
	}
	return out
}

// isFieldPath reports whether s looks like a field path: dotted names with
// optional [index] or ["key"] subscripts, no spaces outside quotes.
func isFieldPath(s string) bool {
	if s == "" || s[0] == '.' || s[0] == '[' {
		return false
	}
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == ' ' || c == '\t' || c == ':' || c == '\'':
			return false
		}
	}
	return !quoted
}
