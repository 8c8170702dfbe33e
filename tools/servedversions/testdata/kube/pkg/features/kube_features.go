package features

import (
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
)

const (
	Gadgets featuregate.Feature = "Gadgets"
	Other   featuregate.Feature = "Other"
)

var defaultVersionedKubernetesFeatureGates = map[featuregate.Feature]featuregate.VersionedSpecs{
	Gadgets: {
		{Version: version.MustParse("1.30"), Default: false, PreRelease: featuregate.Alpha},
		{Version: version.MustParse("1.31"), Default: true, PreRelease: featuregate.Beta},
	},
}

var defaultKubernetesFeatureGates = map[featuregate.Feature]featuregate.FeatureSpec{
	Other: {Default: true, PreRelease: featuregate.Beta},
}
