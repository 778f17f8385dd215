package kube

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// explain turns a forbidden answer into which verb on which resource is
// missing, and for whom; other errors pass with what was being done.
func (c *Cluster) explain(err error, verb, resource string) error {
	where := "in namespace " + c.Namespace
	if c.Namespace == "" {
		where = "cluster-wide"
	}
	if apierrors.IsForbidden(err) {
		// err is the API server's own words: which user, which verb on
		// which resource in which API group.
		return fmt.Errorf("kube: RBAC: missing permission to %s %s %s (grant verb %q on resource %q): %w", verb, resource, where, verb, resource, err)
	}
	return fmt.Errorf("kube: %s %s %s: %w", verb, resource, where, err)
}
