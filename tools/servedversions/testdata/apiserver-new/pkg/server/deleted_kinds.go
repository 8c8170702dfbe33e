package server

// The resource expiration evaluator: kinds past their APILifecycleRemoved are not served.
