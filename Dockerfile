# One image for every service: `python -m services.<name>.main` picks the service.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY libs ./libs
COPY services ./services
# tls: docker-compose's bus-secrets container makes the platform's CA and certificates with it
RUN pip install --no-cache-dir -e '.[tls]'
ENV PYTHONPATH=/app/libs:/app PYTHONUNBUFFERED=1
EXPOSE 50051 9101
CMD ["python", "-m", "services.table.main"]
