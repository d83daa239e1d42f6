package functions_test

// configurationPolicyFields is a Policy whose ConfigurationPolicy template,
// and a ConfigurationPolicy of its own, use object-template fields no
// function reads (objectSelector), as a real OCM manifest does
// (TestItemsPassThrough).
const configurationPolicyFields = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: policy.open-cluster-management.io/v1
  kind: Policy
  metadata:
    name: labelled-configmaps
    namespace: n
  spec:
    disabled: false
    remediationAction: inform
    policy-templates:
    - objectDefinition:
        apiVersion: policy.open-cluster-management.io/v1
        kind: ConfigurationPolicy
        metadata:
          name: labelled-configmaps
        spec:
          remediationAction: inform
          namespaceSelector:
            include: ["team-*"]
          object-templates:
          - complianceType: mustnothave
            objectSelector:
              matchExpressions:
              - key: team
                operator: Exists
            objectDefinition:
              apiVersion: v1
              kind: ConfigMap
              data:
                debug: "true"
- apiVersion: policy.open-cluster-management.io/v1
  kind: ConfigurationPolicy
  metadata:
    name: standalone
    namespace: n
  spec:
    remediationAction: inform
    object-templates:
    - complianceType: musthave
      objectSelector: {}
      objectDefinition:
        apiVersion: v1
        kind: ConfigMap
        metadata:
          namespace: n
        data:
          k: v
`
