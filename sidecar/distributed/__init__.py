"""Mining on a Dask cluster, exactly as one node mines: see DESIGN.md in this folder."""
