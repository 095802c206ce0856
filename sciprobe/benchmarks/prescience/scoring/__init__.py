"""PreScience's own metrics: LACER, the forecast and topic-trend scores, the ranking tasks."""
