def main():
    import importlib.resources as r
    import kvplan.kernels
    print(kvplan.kernels.__file__, [p.name for p in r.files("kvplan.model_specs").iterdir()])
