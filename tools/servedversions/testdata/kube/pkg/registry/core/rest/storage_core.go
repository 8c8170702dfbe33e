package rest

// The core group's provider: the generator reads the core group from the
// resource config and swagger.json, not from here.
type LegacyRESTStorageProvider struct{}
