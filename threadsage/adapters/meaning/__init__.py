"""What a passage means, without a language model: which of its sentences answers a question typed
in a person's own words ("vacation days" for "annual leave", "a new computer" for "laptops are
replaced"). A static embedding shipped inside a package (`model.py`), read per sentence (`units.py`),
and the closeness of a question to each passage (`closeness.py`): what the search reorders its
candidates by and what the offline reader decides with.
"""

from threadsage.adapters.meaning.closeness import Closeness, closeness, reads_meaning
from threadsage.adapters.meaning.units import sentences

__all__ = ["Closeness", "closeness", "reads_meaning", "sentences"]
