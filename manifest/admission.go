package manifest

// Admission is what the admission stage (package admit/stage) found of an
// object on its way in, before any checker judges it: what the API server
// would say of a create (its problems, and whether it could judge the
// object at all), and what mutating admission did to it. The object's
// content is then the object the server would admit. The schema checker
// (rules/schema) reports it; no other checker needs it.
type Admission struct {
	// Judged is false for an object the server's create path could not
	// judge (a custom resource whose CRD is not known): its content is as
	// written.
	Judged bool
	// Problems are what the server would refuse or warn about, in the
	// order found.
	Problems []Problem
	// Mutations are what mutating admission reported of the object (an
	// applied mutation, a denial) and what is wrong with a policy or
	// binding the object is.
	Mutations []Problem
	// Notes are what mutating admission cannot evaluate for the object
	// (a webhook that matches it, a policy that matches a custom
	// resource), said once per cause and kind.
	Notes []KindNote
	// Context is set for an object admitted with the context, before the
	// checkers prepared: its Mutations and Notes belong to the context
	// (reported while the checkers prepare), and only its Problems to the
	// object when it is judged.
	Context bool
	// Kept is what admission keeps of an object whose content it let go
	// once admitted: the typed Namespace (a *corev1.Namespace, package
	// admit reads it) of a Namespace read ahead, which costs a fraction
	// of its content.
	Kept any
}

// Problem is one thing admission says of an object.
type Problem struct {
	// Rule is the rule ID (schema/…, mutation/…).
	Rule string
	// Field is the path of the field at fault ("" for the object).
	Field string
	// Message says what is wrong, in plain language.
	Message string
	// Warning is set for what is said as a warning, not with the rule's
	// own severity.
	Warning bool
}

// KindNote is a note said once per cause and kind, at the first object of
// the kind: Msg is a format of the kind.
type KindNote struct {
	Cause, Msg string
}
