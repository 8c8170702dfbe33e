package v1beta1

func (in *Widget) APILifecycleIntroduced() (major, minor int) {
	return 1, 28
}

func (in *Widget) APILifecycleRemoved() (major, minor int) {
	return 1, 31
}
