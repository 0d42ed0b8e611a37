"""Records llama-index-tools-openapi 0.7.0's OpenAPIToolSpec: the
load_openapi_spec tool's description, and the reduced spec text it returns
for the Petstore specs of openapi-spec-validator 0.9.0's sdist and for a
FastAPI app's own /openapi.json.

    python record_openapi.py SDIST_DATA_DIR FASTAPI_OPENAPI_JSON > openapi.json
"""
import json
import sys

import yaml
from llama_index.tools.openapi import OpenAPIToolSpec

data_dir, fastapi_json = sys.argv[1], sys.argv[2]
out = {}
spec = OpenAPIToolSpec(spec={"openapi": "3.0.0", "info": {"title": "t"}, "servers": [], "paths": {}})
tool = spec.to_tool_list()[0]
out["load_openapi_spec_description"] = tool.metadata.description
out["load_openapi_spec_name"] = tool.metadata.name
out["load_openapi_spec_fn_schema"] = tool.metadata.get_parameters_dict()
cases = {}
for name in ["v3.0/petstore.yaml", "v3.1/petstore.yaml"]:
    with open(f"{data_dir}/{name}") as f:
        raw = yaml.safe_load(f)
    try:
        cases[name] = OpenAPIToolSpec(spec=raw).load_openapi_spec()[0].text
    except Exception as e:  # noqa: BLE001
        cases[name] = {"error": f"{type(e).__name__}: {e}"}
with open(fastapi_json) as f:
    raw = json.load(f)
# LlamaIndex needs `servers`; FastAPI's document has none (the default is "/").
raw["servers"] = [{"url": "/"}]
cases["fastapi"] = OpenAPIToolSpec(spec=raw).load_openapi_spec()[0].text
filtered = OpenAPIToolSpec(spec=raw, operation_id_filter=lambda op: op.startswith("read")).load_openapi_spec()[0].text
cases["fastapi_read_only"] = filtered
out["reduced"] = cases
try:
    OpenAPIToolSpec(spec={"openapi": "3.0.0", "info": {}, "paths": {}})
except Exception as e:  # noqa: BLE001
    out["no_servers_error"] = f"{type(e).__name__}: {e}"
print(json.dumps(out, indent=1, ensure_ascii=False))
