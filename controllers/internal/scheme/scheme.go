package scheme

import (
	openreportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	fleetpolicyv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// New returns a scheme with every kind fleetpolicy reads or writes registered.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		policyv1.AddToScheme,
		policyv1beta1.AddToScheme,
		appsv1.AddToScheme,
		fleetpolicyv1alpha1.AddToScheme,
		clusterv1.Install,
		addonv1alpha1.Install,
		clusterv1beta1.Install,
		operatorsv1.AddToScheme,
		operatorsv1alpha1.AddToScheme,
		openreportsv1alpha1.Install,
	} {
		utilruntime.Must(add(s))
	}
	return s
}
