"""Removing what one test created on a node: its indices and index templates, and the clean-index
templates that `setup` / `serve --clean-index` installed for its patterns."""
from __future__ import annotations


def remove_test_objects(client, prefix: str) -> None:
    """Delete the indices ``{prefix}*`` and the index and component templates named ``{prefix}*``
    or ``bloomspan-clean-{prefix}*`` (the clean-index templates: ``bloomspan-clean-<pattern slug>``).
    Index templates go first: a component template an index template uses cannot be deleted."""
    client.indices.delete(index=f"{prefix}*", ignore_unavailable=True, expand_wildcards="all")
    names = (f"{prefix}*", f"bloomspan-clean-{prefix}*")
    for name in names:
        for template in client.indices.get_index_template(name=name, ignore=[404]).get("index_templates", []):
            client.indices.delete_index_template(name=template["name"])
    for name in names:
        components = client.cluster.get_component_template(name=name, ignore=[404])
        for template in components.get("component_templates", []):
            client.cluster.delete_component_template(name=template["name"], ignore=[404])
