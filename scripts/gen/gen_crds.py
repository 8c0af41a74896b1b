#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generate api/trainer.kubeflow.org_*.yaml, the CRDs of trainer.kubeflow.org/v1alpha1.

The CRD YAML files are committed; this script is how they are written. Edit the
schema here, run `python3 scripts/gen/gen_crds.py` from the repository root, and
commit both. `tests/crd/check.sh` fails when the committed files are stale.
Field names, defaults, limits and CEL rules/messages follow
docs/internals/upstream.md#api-types (Trainer) and JobSet v0.12.0 (the embedded JobSetSpec); the
descriptions are ours.
"""
import os
import sys

import yaml

GROUP = "trainer.kubeflow.org"
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
IMMUTABLE = [{"rule": "self == oldSelf", "message": "field is immutable"}]
JS_IMMUTABLE = [{"rule": "self == oldSelf", "message": "Value is immutable"}]
# kt additions tracking upstream's KEP-2899 (tracker kubeflow/trainer#4052), not in v2.3.0.
PROVISIONAL = "Provisional: a kt addition tracking upstream KEP-2899 (kubeflow/trainer#4052). "
TTL_DESC = ("Seconds after the TrainJob finished (Complete or Failed, from that condition's "
            "lastTransitionTime) before the TrainJob is deleted with its JobSet, pods, "
            "ConfigMaps and Secrets; 0 deletes it at once; absent never deletes it.")
# kt additions tracking upstream's KEP-2782 (Dynamic Resource Allocation), not in v2.3.0; the
# webhook refuses them unless the feature gate DynamicResourceAllocation is on.
DRA = ("Provisional: a kt addition tracking upstream KEP-2782 (Dynamic Resource Allocation), "
       "honoured only with the feature gate DynamicResourceAllocation on. ")
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
CLAIM_ONE_OF = [{
    "rule": "has(self.resourceClaimName) != has(self.resourceClaimTemplateName)",
    "message": "exactly one of resourceClaimName and resourceClaimTemplateName must be set"}]
NO_TEMPLATE_TTL = "must not be set in the runtime's %s: the TrainJob owns %s; use spec.runPolicy.%s"


def no_template_field(field, where, what):
    """A CEL rule refusing field in the runtime's JobSet or Job template (cleanup and
    deadlines belong to the TrainJob, KEP-2899)."""
    return {"rule": "!has(self.%s)" % field,
            "message": field + " " + NO_TEMPLATE_TTL % (where, what, field)}


# ---------------------------------------------------------------- builders
def node(typ, desc, **kw):
    n = {"description": desc, "type": typ}
    for k, v in kw.items():
        if v is None:
            continue
        n[k.replace("_", "-") if k.startswith("x_") else k] = v
    return n


def string(desc, **kw):
    return node("string", desc, **kw)


def boolean(desc, **kw):
    return node("boolean", desc, **kw)


def int32(desc, **kw):
    return node("integer", desc, format="int32", **kw)


def int64(desc, **kw):
    return node("integer", desc, format="int64", **kw)


def obj(desc, props=None, required=None, **kw):
    n = node("object", desc, **kw)
    if props:
        n["properties"] = dict(sorted(props.items()))
    if required:
        n["required"] = sorted(required)
    return n


def opaque(desc, **kw):
    """An object whose content is kept as sent and not schema-checked."""
    return obj(desc, x_kubernetes_preserve_unknown_fields=True, **kw)


def array(desc, items, list_type="atomic", keys=None, **kw):
    n = node("array", desc, items=items, **kw)
    n["x-kubernetes-list-type"] = list_type
    if keys:
        n["x-kubernetes-list-map-keys"] = keys
    return n


def plain_array(desc, items, **kw):
    """An array without x-kubernetes-list-type (atomic by default), as upstream has it."""
    return node("array", desc, items=items, **kw)


def string_map(desc, **kw):
    return obj(desc, additionalProperties={"type": "string"}, **kw)


def quantity(desc):
    return {
        "description": desc,
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": QUANTITY_PATTERN,
        "x-kubernetes-int-or-string": True,
    }


def quantity_map(desc):
    return obj(desc, additionalProperties=quantity("A resource amount."))


# ------------------------------------------------------- core/v1 fragments
def object_meta(desc):
    return obj(desc, {
        "labels": string_map("Labels to set."),
        "annotations": string_map("Annotations to set."),
        "name": string("Name. Ignored where the control plane chooses the name."),
        "namespace": string("Namespace. Ignored where the control plane chooses it."),
        "finalizers": plain_array("Finalizers.", string("A finalizer name.")),
    })


def key_selector(desc, what):
    return obj(desc, {
        "key": string("Key inside the %s." % what),
        "name": string("Name of the %s in the pod's namespace." % what, default=""),
        "optional": boolean("Whether the %s or its key may be missing." % what),
    }, required=["key"], x_kubernetes_map_type="atomic")


def env_var():
    return obj("One environment variable.", {
        "name": string("Variable name."),
        "value": string("Literal value; $(VAR) references are expanded by the kubelet."),
        "valueFrom": obj("Where the value comes from, instead of value.", {
            "configMapKeyRef": key_selector("A key of a ConfigMap.", "ConfigMap"),
            "secretKeyRef": key_selector("A key of a Secret.", "Secret"),
            "fieldRef": obj("A field of the pod (downward API).", {
                "apiVersion": string("Schema version of fieldPath, v1 by default."),
                "fieldPath": string("Path of the field, e.g. metadata.name."),
            }, required=["fieldPath"], x_kubernetes_map_type="atomic"),
            "resourceFieldRef": obj("A resource limit or request of a container.", {
                "containerName": string("Container name; required for volumes."),
                "divisor": quantity("Unit the value is expressed in, 1 by default."),
                "resource": string("Resource, e.g. limits.cpu."),
            }, required=["resource"], x_kubernetes_map_type="atomic"),
            "fileKeyRef": obj("A key of an env file in a volume.", {
                "key": string("Variable name inside the file."),
                "optional": boolean("Whether the file or key may be missing.", default=False),
                "path": string("File path relative to the volume root."),
                "volumeName": string("Name of the volume holding the file."),
            }, required=["key", "path", "volumeName"], x_kubernetes_map_type="atomic"),
        }),
    }, required=["name"])


def env_list(desc):
    return array(desc, env_var(), "map", ["name"], maxItems=128)


def resource_requirements(desc, **kw):
    return obj(desc, {
        "limits": quantity_map("Maximum amount of each resource."),
        "requests": quantity_map("Amount of each resource to reserve."),
        "claims": array("Dynamic resource claims (by name) this container uses.", obj(
            "One claim in use.", {
                "name": string("Name of an entry in the pod's resourceClaims."),
                "request": string("Request inside the claim, if only one is used."),
            }, required=["name"]), "map", ["name"]),
    }, **kw)


def claim_source_props(what):
    """The members of a core/v1 PodResourceClaim: its name and where the claim comes from."""
    return {
        "name": string("Name of the claim inside the pod (a DNS label); %s" % what,
                       minLength=1, maxLength=63, pattern=DNS_LABEL),
        "resourceClaimName": string("An existing ResourceClaim in the TrainJob namespace, "
                                    "shared by every pod that names it.", minLength=1,
                                    maxLength=253),
        "resourceClaimTemplateName": string(
            "A ResourceClaimTemplate in the TrainJob namespace: each pod gets its own claim "
            "made from it, deleted with the pod.", minLength=1, maxLength=253),
    }


def trainer_resource_claim():
    props = claim_source_props("the trainer containers reference it by this name.")
    props["containers"] = array(
        "Containers (or init containers) of the trainer node pod that get the claim in "
        "resources.claims; empty means the node container only.",
        string("A container name.", minLength=1, maxLength=63), "set", maxItems=32)
    return obj("One Dynamic Resource Allocation claim of every training node.", props,
               required=["name"], x_kubernetes_validations=CLAIM_ONE_OF)


def pod_resource_claim():
    return obj("One pod-level resource claim (core/v1 PodResourceClaim).",
               claim_source_props("containers reference it in resources.claims."),
               required=["name"], x_kubernetes_validations=CLAIM_ONE_OF)


def claims_only_resources(desc):
    return obj(desc, {
        "claims": array("Claims (by name) of the pod's resourceClaims this container uses.",
                        obj("One claim in use.", {
                            "name": string("Name of an entry in the pod's resourceClaims.",
                                           minLength=1, maxLength=63),
                            "request": string("Request inside the claim, if only one is used.",
                                              maxLength=253),
                        }, required=["name"]), "map", ["name"], maxItems=32),
    })


def local_object_ref(desc):
    return obj(desc, {
        "name": string("Name of the object in the same namespace.", default=""),
    }, x_kubernetes_map_type="atomic")


def selinux_options():
    return obj("SELinux context to apply.", {
        k: string("SELinux %s label." % k) for k in ("level", "role", "type", "user")})


def seccomp_like(desc):
    return obj(desc, {
        "type": string("Profile kind: RuntimeDefault, Unconfined or Localhost."),
        "localhostProfile": string("Profile path on the node when type is Localhost."),
    }, required=["type"])


def windows_options():
    return obj("Windows-specific settings.", {
        "gmsaCredentialSpec": string("GMSA credential spec content."),
        "gmsaCredentialSpecName": string("Name of the GMSA credential spec."),
        "hostProcess": boolean("Run as a Windows host process."),
        "runAsUserName": string("Windows user name."),
    })


def common_security():
    return {
        "appArmorProfile": seccomp_like("AppArmor profile."),
        "runAsGroup": int64("Primary GID."),
        "runAsNonRoot": boolean("Refuse to start as UID 0."),
        "runAsUser": int64("UID."),
        "seLinuxOptions": selinux_options(),
        "seccompProfile": seccomp_like("Seccomp profile."),
        "windowsOptions": windows_options(),
    }


def pod_security_context():
    props = common_security()
    props.update({
        "fsGroup": int64("Supplemental group that owns the pod's volumes."),
        "fsGroupChangePolicy": string("OnRootMismatch or Always."),
        "seLinuxChangePolicy": string("MountOption or Recursive."),
        "supplementalGroups": array("Extra GIDs.", int64("A GID.")),
        "supplementalGroupsPolicy": string("Merge or Strict."),
        "sysctls": array("Namespaced sysctls.", obj("One sysctl.", {
            "name": string("Sysctl name."), "value": string("Sysctl value.")},
            required=["name", "value"])),
    })
    return props


def container_security_context(desc, **kw):
    props = common_security()
    props.update({
        "allowPrivilegeEscalation": boolean("Allow gaining more privileges than the parent."),
        "capabilities": obj("Linux capabilities to add or drop.", {
            "add": array("Capabilities to add.", string("A capability.")),
            "drop": array("Capabilities to drop.", string("A capability.")),
        }),
        "privileged": boolean("Run privileged."),
        "procMount": string("Default or Unmasked."),
        "readOnlyRootFilesystem": boolean("Mount the root filesystem read-only."),
    })
    return obj(desc, props, **kw)


def toleration():
    return obj("One toleration.", {
        "effect": string("Taint effect to match; empty matches all."),
        "key": string("Taint key; empty with operator Exists matches all."),
        "operator": string("Exists or Equal (default)."),
        "tolerationSeconds": int64("How long a NoExecute taint is tolerated."),
        "value": string("Taint value for operator Equal."),
    })


def volume_mount():
    return obj("One volume mount.", {
        "mountPath": string("Path inside the container."),
        "mountPropagation": string("None, HostToContainer or Bidirectional."),
        "name": string("Name of a pod volume."),
        "readOnly": boolean("Mount read-only."),
        "recursiveReadOnly": string("Disabled, IfPossible or Enabled."),
        "subPath": string("Sub-path of the volume to mount."),
        "subPathExpr": string("Sub-path with $(VAR) expansion."),
    }, required=["mountPath", "name"])


VOLUME_SOURCES = (
    "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "configMap", "csi",
    "downwardAPI", "emptyDir", "ephemeral", "fc", "flexVolume", "flocker", "gcePersistentDisk",
    "gitRepo", "glusterfs", "hostPath", "image", "iscsi", "nfs", "persistentVolumeClaim",
    "photonPersistentDisk", "portworxVolume", "projected", "quobyte", "rbd", "scaleIO", "secret",
    "storageos", "vsphereVolume")


def volume_item():
    # Each volume source is an opaque object (its content is kept, not checked).
    # The item itself must NOT preserve unknown fields: CEL equality (the
    # immutability rule on the list) ignores unknown fields of an object that
    # has declared properties, so an opaque item would make any change to a
    # volume's source pass as "unchanged".
    props = {k: opaque("core/v1 %s volume source (not schema-checked here)." % k)
             for k in VOLUME_SOURCES}
    props["name"] = string("Volume name, referenced by volume mounts.")
    return obj("One pod volume (core/v1 Volume).", props, required=["name"])


# ---------------------------------------------------------------- TrainJob
def container_patch(kind):
    return obj("Changes to one %s of the runtime, matched by name." % kind, {
        "name": string("Name of a %s that exists in the runtime job." % kind,
                       minLength=1, maxLength=253),
        "env": env_list("Environment variables to add or replace. Not allowed for the "
                        "node, dataset-initializer and model-initializer containers."),
        "volumeMounts": array("Volume mounts to add or replace.", volume_mount(),
                              "map", ["name"], maxItems=128),
        "securityContext": container_security_context("Security context to set."),
        "resources": claims_only_resources(
            DRA + "Resource claims of the container; only claims is accepted here."),
    }, required=["name"])


def pod_spec_patch():
    return obj("Pod spec changes.", {
        "serviceAccountName": string("Service account of the pods.", maxLength=253,
                                     x_kubernetes_validations=IMMUTABLE),
        "volumes": array("Volumes to add or replace (core/v1 Volume).", volume_item(),
                         "map", ["name"], maxItems=128, x_kubernetes_validations=IMMUTABLE),
        "initContainers": array("Init container changes.", container_patch("init container"),
                                "map", ["name"], maxItems=64,
                                x_kubernetes_validations=IMMUTABLE),
        "containers": array("Container changes.", container_patch("container"),
                            "map", ["name"], maxItems=64, x_kubernetes_validations=IMMUTABLE),
        "imagePullSecrets": array("Image pull Secrets to add.",
                                  local_object_ref("A Secret in the TrainJob namespace."),
                                  "map", ["name"], maxItems=64,
                                  x_kubernetes_validations=IMMUTABLE),
        "securityContext": obj("Pod-level security context.", pod_security_context(),
                               x_kubernetes_validations=IMMUTABLE),
        "nodeSelector": string_map("Node labels the pods must match. Changeable while suspended."),
        "affinity": opaque("Scheduling affinity (core/v1 Affinity; not schema-checked here)."),
        "tolerations": array("Taints the pods tolerate.", toleration(), maxItems=128),
        "schedulingGates": array("Gates that hold the pods back from scheduling.", obj(
            "One scheduling gate.", {"name": string("Gate name.")}, required=["name"]),
            "map", ["name"], maxItems=16),
        "terminationGracePeriodSeconds": int64("Grace period for pod termination.", minimum=0,
                                               x_kubernetes_validations=IMMUTABLE),
        "resourceClaims": array(DRA + "Pod-level resource claims to add or replace, by name.",
                                pod_resource_claim(), "map", ["name"], maxItems=32),
    })


def runtime_patch():
    pod_tpl = obj("Pod template changes.", {
        "metadata": object_meta("Pod labels and annotations to merge."),
        "spec": pod_spec_patch(),
    })
    job_tpl = obj("Job template changes.", {
        "metadata": object_meta("Job labels and annotations to merge."),
        "spec": obj("Job spec changes.", {"template": pod_tpl}),
    })
    rjob = obj("Changes to one replicated job of the runtime, matched by name.", {
        "name": string("Name of a replicated job in the runtime.", minLength=1, maxLength=253),
        "template": job_tpl,
    }, required=["name"])
    spec = obj("Changes to the runtime's training runtime spec.", {
        "template": obj("Changes to the JobSet template.", {
            "metadata": object_meta("JobSet labels and annotations to merge."),
            "spec": obj("JobSet spec changes.", {
                "replicatedJobs": array("Replicated job changes.", rjob, "map", ["name"],
                                        maxItems=100),
            }),
        }),
    })
    return obj("A set of changes to the runtime, owned by one manager.", {
        "manager": string("Who owns this patch, as a domain-prefixed path "
                          "(e.g. example.com/my-tool).", minLength=1, maxLength=253,
                          x_kubernetes_validations=IMMUTABLE),
        "time": string("When the patch was last changed; set by the admission webhook.",
                       format="date-time"),
        "trainingRuntimeSpec": spec,
    }, required=["manager"])


def initializer(what):
    return obj("Settings of the %s initializer job." % what, {
        "storageUri": string(
            "Where the %s comes from, as scheme://... (e.g. hf://, s3://)." % what,
            maxLength=2048, x_kubernetes_validations=[{
                "rule": "self == '' || self.matches('^[A-Za-z][A-Za-z0-9+.-]*://.+$')",
                "message": "storageUri may be empty, or it must be a valid URI (scheme://...)",
            }]),
        "env": env_list("Extra environment variables for the %s-initializer container." % what),
        "secretRef": local_object_ref(
            "Secret in the TrainJob namespace exposed to the initializer as env vars."),
    })


def trainer():
    return obj("Overrides for the trainer job of the runtime.", {
        "image": string("Container image of the trainer node container.", maxLength=500),
        "command": array("Entrypoint of the trainer node container.",
                         string("One argument.", maxLength=1048576), maxItems=128),
        "args": array("Arguments of the trainer node container.",
                      string("One argument.", maxLength=1048576), maxItems=128),
        "env": env_list("Environment variables of the trainer node container."),
        # Deliberate difference (docs/compatibility.md): upstream v2.3.0 has no bound here and
        # admits -1, which only fails when the JobSet controller's Jobs are refused later.
        "numNodes": int32("Number of training nodes (pods); overrides mlPolicy.numNodes.",
                          minimum=0),
        "resourcesPerNode": resource_requirements(
            "Compute resources of each training node. Device claims go in "
            "resourceClaimsPerNode, not in claims here.",
            x_kubernetes_validations=[{
                "rule": "!has(self.claims)",
                "message": "claims must not be set in resourcesPerNode: use "
                           "spec.trainer.resourceClaimsPerNode"}]),
        "resourceClaimsPerNode": array(
            DRA + "Dynamic Resource Allocation claims of each training node: added to the "
            "trainer node pods' resourceClaims and to resources.claims of their node "
            "container (or of the listed containers). Overrides a runtime or runtimePatches "
            "claim of the same name.", trainer_resource_claim(), "map", ["name"], maxItems=32),
        "numProcPerNode": int32(
            "Processes per node. Torch: unset means automatic; MPI: slots per node.",
            x_kubernetes_validations=[{
                "rule": "self >= 1",
                "message": "numProcPerNode must be greater than or equal to 1"}]),
    }, x_kubernetes_validations=IMMUTABLE)


def condition():
    return obj("One condition (metav1.Condition).", {
        "type": string("Condition type, e.g. Complete, Failed, Suspended.", maxLength=316,
                       pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*"
                               r"[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"),
        "status": string("True, False or Unknown.", enum=["True", "False", "Unknown"]),
        "observedGeneration": int64("Generation the condition was computed for.", minimum=0),
        "lastTransitionTime": string("Last time the status changed.", format="date-time"),
        "reason": string("Machine-readable CamelCase reason.", minLength=1, maxLength=1024,
                         pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"),
        "message": string("Human-readable detail.", maxLength=32768),
    }, required=["lastTransitionTime", "message", "reason", "status", "type"])


def trainjob_status():
    count = lambda d: int32(d, minimum=0)  # noqa: E731
    job = obj("Pod counts of one replicated job.", {
        "name": string("Replicated job name.", minLength=1, maxLength=253),
        "ready": count("Ready pods."),
        "succeeded": count("Succeeded pods."),
        "failed": count("Failed pods."),
        "active": count("Active pods."),
        "suspended": count("Suspended jobs."),
    }, required=["active", "failed", "name", "ready", "succeeded", "suspended"])
    metric = obj("One training metric.", {
        "name": string("Metric name.", minLength=1, maxLength=64),
        "value": string("Metric value as text.", minLength=1, maxLength=64),
    }, required=["name", "value"])
    tstatus = obj("Progress reported by the training code through the status server.", {
        "progressPercentage": int32("Progress, 0 to 100.", minimum=0, maximum=100),
        "estimatedRemainingSeconds": int32("Estimated time left.", minimum=0),
        "metrics": array("Latest metrics.", metric, maxItems=256),
        "lastUpdatedTime": string("When the trainer last reported.", format="date-time"),
    }, x_kubernetes_validations=[{
        "rule": "has(self.lastUpdatedTime)",
        "message": "lastUpdatedTime is required when trainerStatus is present"}])
    return obj("Observed state of the TrainJob.", {
        "conditions": array("Latest observations: Suspended, Complete, Failed.", condition(),
                            "map", ["type"], maxItems=8),
        "jobsStatus": array("Per replicated job pod counts, copied from the JobSet.", job,
                            "map", ["name"], maxItems=100),
        "trainerStatus": tstatus,
        "startTime": string(PROVISIONAL + "When the TrainJob last started running: set when it "
                            "runs unsuspended, cleared while suspended, set anew on resume "
                            "(JobSet/Job semantics).", format="date-time"),
        "completionTime": string(PROVISIONAL + "When the TrainJob finished (Complete or Failed); "
                                 "set once.", format="date-time"),
    }, minProperties=1)


def trainjob_spec():
    return obj("Desired state of the TrainJob.", {
        "runtimeRef": obj("The runtime this TrainJob is built from.", {
            "name": string("Runtime name.", minLength=1, maxLength=253),
            "apiGroup": string("Runtime API group.", default=GROUP, maxLength=253),
            "kind": string("ClusterTrainingRuntime or TrainingRuntime (same namespace).",
                           default="ClusterTrainingRuntime", maxLength=253),
        }, required=["name"], x_kubernetes_validations=IMMUTABLE),
        "initializer": obj("Dataset and model initializer settings.", {
            "dataset": initializer("dataset"),
            "model": initializer("model"),
        }, x_kubernetes_validations=IMMUTABLE),
        "trainer": trainer(),
        "runtimePatches": array("Changes to the runtime, one entry per manager. Changeable "
                                "only while suspended.", runtime_patch(), "map", ["manager"],
                                maxItems=16),
        "suspend": boolean("Suspend the TrainJob (its JobSet and pods).", default=False),
        "activeDeadlineSeconds": int64("Seconds the TrainJob may run before it is failed.",
                                       minimum=1, x_kubernetes_validations=IMMUTABLE),
        "ttlSecondsAfterFinished": int32(PROVISIONAL + TTL_DESC + " Overrides the runtime's "
                                         "spec.runPolicy.ttlSecondsAfterFinished. Mutable.",
                                         minimum=0),
        "managedBy": string(
            "Controller that reconciles this TrainJob.",
            default="trainer.kubeflow.org/trainjob-controller", maxLength=253,
            x_kubernetes_validations=[
                {"rule": "self in ['trainer.kubeflow.org/trainjob-controller', "
                         "'kueue.x-k8s.io/multikueue']",
                 "message": "ManagedBy must be trainer.kubeflow.org/trainjob-controller or "
                            "kueue.x-k8s.io/multikueue if set"},
            ] + IMMUTABLE),
    }, required=["runtimeRef"])


def top_level(desc, spec, status=None, **kw):
    props = {
        "apiVersion": string("API version of this object."),
        "kind": string("Kind of this object."),
        "metadata": {"type": "object"},
        "spec": spec,
    }
    if status:
        props["status"] = status
    return obj(desc, props, **kw)


def trainjob_schema():
    return top_level("A training job built from a (Cluster)TrainingRuntime.",
                     trainjob_spec(), trainjob_status(), x_kubernetes_validations=[
                         {"rule": "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
                          "message": "metadata.name must match RFC 1035 DNS label format"},
                         {"rule": "size(self.metadata.name) <= 63",
                          "message": "metadata.name must be no more than 63 characters"}])


# ------------------------------------------------------- embedded JobSetSpec
def named_list_items(desc, key="name"):
    return obj(desc, {key: string("Name.")}, required=[key],
               x_kubernetes_preserve_unknown_fields=True)


def pod_template():
    spec = obj("Pod spec (core/v1 PodSpec). Only the container, init container and volume "
               "names are schema-checked here; everything else is kept as written.", {
                   "containers": array("Containers.", named_list_items("A container."),
                                       "map", ["name"]),
                   "initContainers": array("Init containers.",
                                           named_list_items("An init container."),
                                           "map", ["name"]),
                   "volumes": array("Volumes.", named_list_items("A volume."), "map", ["name"]),
               }, required=["containers"], x_kubernetes_preserve_unknown_fields=True)
    return obj("Template of the pods of the job.", {
        "metadata": object_meta("Pod labels and annotations."),
        "spec": spec,
    })


def label_selector(desc):
    return obj(desc, {
        "matchLabels": string_map("Labels that must all match."),
        "matchExpressions": array("Set-based requirements.", obj("One requirement.", {
            "key": string("Label key."),
            "operator": string("In, NotIn, Exists or DoesNotExist."),
            "values": array("Values for In/NotIn.", string("A value.")),
        }, required=["key", "operator"])),
    }, x_kubernetes_map_type="atomic")


def job_spec():
    pfp_rule = obj("One pod failure policy rule.", {
        "action": string("FailJob, FailIndex, Ignore or Count."),
        "onExitCodes": obj("Exit code requirement.", {
            "containerName": string("Restrict to this container."),
            "operator": string("In or NotIn."),
            "values": array("Exit codes.", int32("An exit code."), "set"),
        }, required=["operator", "values"]),
        "onPodConditions": array("Pod condition requirements.", obj("One pattern.", {
            "status": string("Condition status to match."),
            "type": string("Condition type to match."),
        }, required=["type"])),
    }, required=["action"])
    return obj("Job spec (batch/v1 JobSpec).", {
        "activeDeadlineSeconds": int64("Seconds the job may be active."),
        "backoffLimit": int32("Retries before the job fails."),
        "backoffLimitPerIndex": int32("Retries per index (Indexed jobs)."),
        "completionMode": string("NonIndexed or Indexed."),
        "completions": int32("Successful pods needed; set by the control plane for "
                             "training jobs."),
        "managedBy": string("Controller of the job."),
        "manualSelector": boolean("Use a user-provided selector."),
        "maxFailedIndexes": int32("Failed indexes tolerated (Indexed jobs)."),
        "parallelism": int32("Pods running at once; set by the control plane for "
                             "training jobs."),
        "podFailurePolicy": obj("How pod failures count.", {
            "rules": array("Rules, first match wins.", pfp_rule),
        }, required=["rules"]),
        "podReplacementPolicy": string("TerminatingOrFailed or Failed."),
        "selector": label_selector("Pod selector."),
        "successPolicy": obj("When the job is successful early.", {
            "rules": array("Rules.", obj("One rule.", {
                "succeededCount": int32("Number of succeeded indexes needed."),
                "succeededIndexes": string("Index set, e.g. 0-2,5."),
            })),
        }, required=["rules"]),
        "suspend": boolean("Suspend the job."),
        "template": pod_template(),
        "ttlSecondsAfterFinished": int32("Seconds before a finished job is deleted."),
    }, required=["template"], x_kubernetes_validations=[
        no_template_field("activeDeadlineSeconds", "Job templates", "the deadline"),
        no_template_field("ttlSecondsAfterFinished", "Job templates", "cleanup")])


def replicated_job():
    return obj("A group of identical Jobs.", {
        "name": string("Replicated job name (node, launcher, dataset-initializer, "
                       "model-initializer, ...)."),
        "groupName": string("Group the replicated job belongs to.", default="default"),
        "replicas": int32("Number of Jobs created from the template.", default=1),
        "dependsOn": array("Replicated jobs that must reach a status before this one starts.",
                           obj("One dependency.", {
                               "name": string("Replicated job depended on."),
                               "status": string("Ready or Complete.",
                                                enum=["Ready", "Complete"]),
                           }, required=["name", "status"]),
                           "map", ["name"], maxItems=5, x_kubernetes_validations=JS_IMMUTABLE),
        "template": obj("Job template.", {
            "metadata": object_meta("Job labels (e.g. trainer.kubeflow.org/"
                                    "trainjob-ancestor-step) and annotations."),
            "spec": job_spec(),
        }),
    }, required=["name", "template"])


def jobset_spec():
    fp_rule = obj("One failure policy rule.", {
        "action": string("What to do when the rule matches.", enum=[
            "FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts", "RestartJob",
            "RestartJobAndIgnoreMaxRestarts"]),
        "name": string("Rule name."),
        "onJobFailureMessagePatterns": plain_array("Job failure message patterns to match.",
                                                   string("A regular expression.")),
        "onJobFailureReasons": plain_array("Job failure reasons to match.",
                                           string("A reason.")),
        "targetReplicatedJobs": array("Replicated jobs the rule applies to.",
                                      string("A replicated job name.")),
    }, required=["action", "name"])
    vcp = obj("PersistentVolumeClaims created per JobSet and mounted by name.", {
        "templates": array("Claim templates; metadata.name is the volume name.", obj(
            "One claim template (core/v1 PersistentVolumeClaim).", {
                "apiVersion": string("API version."),
                "kind": string("Kind."),
                "metadata": object_meta("Claim metadata; namespace must not be set."),
                "spec": opaque("Claim spec (core/v1 PersistentVolumeClaimSpec; "
                               "not schema-checked here)."),
                "status": opaque("Claim status (ignored)."),
            }), maxItems=50),
        "retentionPolicy": obj("What happens to the claims with the JobSet.", {
            "whenDeleted": string("Delete or Retain.", default="Delete",
                                  enum=["Delete", "Retain"]),
        }),
    }, x_kubernetes_validations=[{
        "rule": "self.templates.all(t, !has(t.metadata.namespace) || "
                "size(t.metadata.namespace) == 0)",
        "message": "namespace cannot be set for VolumeClaimPolicies templates"}])
    return obj("JobSet spec (jobset.x-k8s.io/v1alpha2 JobSetSpec) the TrainJob's JobSet is "
               "built from.", {
        "replicatedJobs": array("Replicated jobs.", replicated_job(), "map", ["name"]),
        "network": obj("Pod networking.", {
            "enableDNSHostnames": boolean("Give pods stable DNS host names."),
            "subdomain": string("Headless service name; the TrainJob name by default."),
            "publishNotReadyAddresses": boolean("Publish DNS records of pods not yet ready."),
        }, x_kubernetes_validations=JS_IMMUTABLE),
        "successPolicy": obj("When the JobSet succeeds.", {
            "operator": string("All or Any of the target jobs must succeed.",
                               enum=["All", "Any"]),
            "targetReplicatedJobs": array("Replicated jobs considered; all by default.",
                                          string("A replicated job name.")),
        }, required=["operator"], x_kubernetes_validations=JS_IMMUTABLE),
        "failurePolicy": obj("How job failures are handled.", {
            "maxRestarts": int32("Restarts allowed before the JobSet fails."),
            "restartStrategy": string("How a restart is done.", default="Recreate",
                                      enum=["Recreate", "BlockingRecreate", "InPlaceRestart"]),
            "rules": plain_array("Rules, first match wins.", fp_rule),
        }, x_kubernetes_validations=JS_IMMUTABLE),
        "startupPolicy": obj("Order in which replicated jobs start.", {
            "startupPolicyOrder": string("AnyOrder or InOrder.", enum=["AnyOrder", "InOrder"]),
        }, required=["startupPolicyOrder"], x_kubernetes_validations=JS_IMMUTABLE),
        "suspend": boolean("Suspend the JobSet; set by the control plane."),
        "coordinator": obj("Pod whose address is published as the coordinator.", {
            "replicatedJob": string("Replicated job of the coordinator pod."),
            "jobIndex": node("integer", "Job index inside the replicated job."),
            "podIndex": node("integer", "Pod index inside the job."),
        }, required=["replicatedJob"]),
        "managedBy": string("Controller of the JobSet."),
        "ttlSecondsAfterFinished": int32("Seconds before a finished JobSet is deleted.",
                                         minimum=0),
        "volumeClaimPolicies": array("Claims created for the JobSet.", vcp, maxItems=50,
                                     x_kubernetes_validations=JS_IMMUTABLE),
    }, x_kubernetes_validations=[{
        "rule": "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == "
                "'InOrder' && self.replicatedJobs.exists(x, has(x.dependsOn)))",
        "message": "StartupPolicy and DependsOn APIs are mutually exclusive"},
        no_template_field("ttlSecondsAfterFinished", "JobSet template", "cleanup")])


# ------------------------------------------------------------------ runtimes
def ml_policy():
    target = obj("Extra containers of one job that get the PET_* variables.", {
        "jobName": string("Replicated job name.", minLength=1, maxLength=253),
        "containerNames": array("Containers, other than node, to inject into.",
                                string("A container name.", maxLength=63), "set",
                                minItems=1, maxItems=8, x_kubernetes_validations=[{
                                    "rule": "!self.exists(c, c == 'node')",
                                    "message": "containerNames must not include the main node "
                                               "container because PET_* envs are always "
                                               "injected into it"}]),
    }, required=["containerNames", "jobName"])
    return obj("Machine learning framework settings; at most one framework.", {
        "numNodes": int32("Number of training nodes; 1 when unset."),
        "torch": obj("PyTorch (torchrun) settings.", {
            "envInjection": obj("Where else to inject the PET_* variables.", {
                "targets": array("Targets, one per job.", target, "map", ["jobName"],
                                 maxItems=16),
            }),
        }),
        "mpi": obj("MPI settings.", {
            "numProcPerNode": int32("Slots per node.", default=1, x_kubernetes_validations=[{
                "rule": "self >= 1", "message": "NumProcPerNode in mpiPolicy must be >= 1"}]),
            "mpiImplementation": string("MPI implementation.", default="OpenMPI",
                                        enum=["OpenMPI", ""]),
            "sshAuthMountPath": string("Where the SSH key Secret is mounted.",
                                       default="/root/.ssh", maxLength=4096),
            "runLauncherAsNode": boolean("The launcher also runs training processes.",
                                         default=False),
        }),
        "flux": obj("Flux Framework settings.", {
            "numProcPerNode": int32("Tasks per node.", default=1, x_kubernetes_validations=[{
                "rule": "self >= 1", "message": "NumProcPerNode in fluxPolicy must be >= 1"}]),
        }),
        "jax": obj("JAX distributed settings (none yet)."),
        "xgboost": obj("XGBoost (Rabit/Collective) settings (none yet)."),
    }, x_kubernetes_validations=[{
        "rule": "[has(self.torch), has(self.mpi), has(self.jax), has(self.xgboost),"
                "has(self.flux)].filter(x, x).size() <= 1",
        "message": "Only one of the policy can be configured"}])


def pod_group_policy():
    return obj("Gang scheduling settings; use one of coscheduling or volcano.", {
        "coscheduling": obj("scheduler-plugins coscheduling PodGroup.", {
            "scheduleTimeoutSeconds": int32("Seconds to wait for the whole gang.", default=60),
        }),
        "volcano": obj("Volcano PodGroup.", {
            "networkTopology": obj("Network topology constraints.", {
                "mode": string("hard or soft.", default="hard", enum=["hard", "soft"]),
                "highestTierAllowed": node("integer", "Highest network tier the gang may "
                                                      "span.", default=1),
            }),
        }),
    })


def runtime_schema(kind_desc):
    spec = obj("Training runtime: ML policy, gang scheduling and the JobSet template.", {
        "mlPolicy": ml_policy(),
        "podGroupPolicy": pod_group_policy(),
        "runPolicy": obj(PROVISIONAL + "Lifecycle defaults for the TrainJobs of this runtime; "
                         "a TrainJob's own field overrides each.", {
                             "activeDeadlineSeconds": int64(
                                 "Default spec.activeDeadlineSeconds of the TrainJobs.",
                                 minimum=1),
                             "ttlSecondsAfterFinished": int32(
                                 "Default spec.ttlSecondsAfterFinished of the TrainJobs: " +
                                 TTL_DESC, minimum=0),
                         }),
        "template": obj("JobSet template of the TrainJobs.", {
            "metadata": object_meta("JobSet labels and annotations."),
            "spec": jobset_spec(),
        }, minProperties=1),
    }, minProperties=1)
    return top_level(kind_desc, spec)


# ---------------------------------------------------------------- CRD shell
def crd(kind, plural, scope, schema, extra=None):
    version = {"name": "v1alpha1", "served": True, "storage": True}
    version.update(extra or {})
    version["schema"] = {"openAPIV3Schema": schema}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "%s.%s" % (plural, GROUP)},
        "spec": {
            "group": GROUP,
            "names": {"kind": kind, "listKind": kind + "List", "plural": plural,
                      "singular": plural[:-1]},
            "scope": scope,
            "versions": [version],
        },
    }


def all_crds():
    return {
        "trainjobs": crd("TrainJob", "trainjobs", "Namespaced", trainjob_schema(), {
            "additionalPrinterColumns": [
                # The condition that is True now (upstream #3963): a resumed job has only
                # Suspended=False, so it no longer shows Suspended. No new condition type.
                {"name": "State", "type": "string",
                 "jsonPath": '.status.conditions[?(@.status=="True")].type'},
                {"name": "Suspended", "type": "boolean", "jsonPath": ".spec.suspend"},
                {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
            ],
            "subresources": {"status": {}},
        }),
        "trainingruntimes": crd(
            "TrainingRuntime", "trainingruntimes", "Namespaced",
            runtime_schema("A training runtime usable by TrainJobs of its own namespace.")),
        "clustertrainingruntimes": crd(
            "ClusterTrainingRuntime", "clustertrainingruntimes", "Cluster",
            runtime_schema("A training runtime usable by TrainJobs of every namespace.")),
    }


HEADER = ("# SPDX-License-Identifier: Apache-2.0\n"
          "# Generated by scripts/gen/gen_crds.py; edit that script, not this file.\n"
          "# CRD of trainer.kubeflow.org/v1alpha1 (see docs/internals/upstream.md#api-types).\n---\n")


def render(doc):
    return HEADER + yaml.safe_dump(doc, sort_keys=False, width=100, allow_unicode=True)


def main(argv):
    """Usage: gen_crds.py [--check] [REPO_ROOT]; --check compares instead of writing."""
    check = "--check" in argv
    args = [a for a in argv[1:] if a != "--check"]
    root = args[0] if args else "."
    stale = 0
    for plural, doc in all_crds().items():
        path = os.path.join(root, "api", "%s_%s.yaml" % (GROUP, plural))
        text = render(doc)
        if check:
            with open(path) as f:
                if f.read() != text:
                    print("stale: %s" % path)
                    stale += 1
            continue
        with open(path, "w") as f:
            f.write(text)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
