// validate.mjs - checks Kubernetes manifests against the API's own schemas,
// offline: every object of every YAML file given is built as the
// kubernetes-models class of its apiVersion and kind, whose validate()
// applies the OpenAPI schema of that Kubernetes release (types, required
// fields, enums). Unknown fields pass, as kubectl's default does.
// Prints one line per object and "N objects, M invalid"; exit 1 if any.
//   node validate.mjs deploy/k8s/*.yaml   (run from where npm ci put
//   node_modules: tests/integration/test_deploy.sh does this)
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

// apiVersion -> module of kubernetes-models; the core group has no prefix.
const modules = {
    "v1": "kubernetes-models/v1",
    "apps/v1": "kubernetes-models/apps/v1",
    "batch/v1": "kubernetes-models/batch/v1",
    "networking.k8s.io/v1": "kubernetes-models/networking.k8s.io/v1",
    "policy/v1": "kubernetes-models/policy/v1",
    "rbac.authorization.k8s.io/v1": "kubernetes-models/rbac.authorization.k8s.io/v1",
};

let objects = 0, invalid = 0;
const fail = (where, why) => { invalid++; console.log(`INVALID ${where}: ${why}`); };
for (const file of process.argv.slice(2)) {
    for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
        if (doc.errors.length) {
            fail(file, doc.errors[0].message);
            continue;
        }
        const obj = doc.toJS();
        if (!obj)
            continue;
        objects++;
        const where = `${file}: ${obj.kind}/${obj.metadata?.name}`;
        const module = modules[obj.apiVersion];
        if (!module) {
            fail(where, `apiVersion ${obj.apiVersion} is not one this check knows`);
            continue;
        }
        const kind = (await import(module))[obj.kind];
        if (!kind) {
            fail(where, `no kind ${obj.kind} in ${obj.apiVersion}`);
            continue;
        }
        try {
            new kind(obj).validate();
            console.log(`ok ${where}`);
        } catch (e) {
            fail(where, e.message);
        }
    }
}
console.log(`${objects} objects, ${invalid} invalid`);
process.exit(invalid || !objects ? 1 : 0);
