"""What the tests compare with, imported when a test first uses it. Importing transformers' models takes seconds
(they pull in torch.distributed's tensors and dynamo): at module level, every pytest-xdist worker paid that while
collecting, also for files it then never ran."""

import importlib
from functools import cached_property


class Lazy:
    """`Lazy("transformers.models.llama.modeling_llama")`: that module, `Lazy("transformers", "LlamaConfig")`: that
    name of it; imported on the first attribute, call or item asked of it, then the same object's."""

    def __init__(self, module, name=None):
        self._module, self._name = module, name

    @cached_property
    def _target(self):
        module = importlib.import_module(self._module)
        return module if self._name is None else getattr(module, self._name)

    def __getattr__(self, attr):
        if attr.startswith("_"):  # what collection asks of every module attribute (pytest's fixture marker): no import
            raise AttributeError(attr)
        return getattr(self._target, attr)

    def __call__(self, *args, **kwargs):
        return self._target(*args, **kwargs)

    def __getitem__(self, key):
        return self._target[key]

    def __repr__(self):
        return f"Lazy({self._module!r}, {self._name!r})"
