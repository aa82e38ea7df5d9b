"""Production traces as a run's input: OpenTelemetry spans (OpenInference or GenAI conventions) become rows.

An input adapter: it reads and maps, it never scores (docs/traces.md). The pieces, in the order a
span goes through them:

* :mod:`.files`, :mod:`.otlp_json`, :mod:`.otlp_proto`: span files (OTLP JSON lines, OTLP protobuf) read
  one line or message at a time into :class:`~.spans.RawSpan`;
* :mod:`.convention`, :mod:`.openinference`, :mod:`.genai`, :mod:`.messages`: a span read through its
  convention into a :class:`~.spans.SpanInfo`;
* :mod:`.grouping`: spans grouped by trace (and traces by session) in bounded memory;
* :mod:`.selection`, :mod:`.scopes`: the filters, the seeded sample, and the rows of each scope;
* :mod:`.load`: all of it, as a run's dataset (:func:`~.load.load_traces`);
* :mod:`.spec`: ``traces:`` in a run configuration;
* :mod:`.receiver`, :mod:`.rotation`: ``sonar traces serve``, an OTLP/HTTP receiver writing span files.

Nothing is imported here, so that the configuration can read :mod:`.spec` alone.
"""
