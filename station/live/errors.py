"""What the live station raises to whoever submits an event: the API's 503 and 422.

In a module of their own so that every part (the writer, the protection monitor, the API)
can name them without importing the station that composes the parts."""


class NotReady(Exception):
    """The service is starting, stopping, failed, or its journal cannot be written now:
    the API answers 503."""


class Refused(Exception):
    """This one event cannot be journaled (it cannot be stored as JSON): the API answers
    422. The refusal is journaled as a notice; the rest of its batch commits."""
